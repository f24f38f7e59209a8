"""Below 16 bits: fp8 and microscaling recipes applied to the attention block's GEMMs, measured.

recipes.py   the five recipes (tensorwise, rowwise, delayed, mxfp8, nvfp4) as data, with their sources
quantize.py  one operand stored under a recipe (payload + scales, bit-exact with the reference
             implementations) and what that did to it (amax, scales and their bits, underflow/overflow
             shares, error against float64, dynamic range against the format's)
block.py     the attention block's q/k/v/out projections run forward and backward under a recipe, traced
"""
