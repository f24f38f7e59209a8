"""The five low-precision training recipes the fp8 lesson runs, as data.

A recipe says, for each role a GEMM operand plays (the activation `input`, the `weight`, the `grad_output` of
backward), which element format stores it, how its scale is shared (one per tensor, one per row along the
contraction axis, one per block of consecutive elements along it) and in what format the scale itself is kept.
What a recipe *does* lives in mpviz/fp8/quantize.py; here is only what each one is, with where it comes from:

    tensorwise  torchao Float8LinearConfig "tensorwise": e4m3 forward, e5m2 grad_output, one fp32 scale per tensor
    rowwise     torchao Float8LinearConfig "rowwise": e4m3 everywhere, one fp32 scale per row, rounded down to a
                power of two
    delayed     Transformer Engine DelayedScaling (format HYBRID): e4m3 forward, e5m2 grad_output, the scale from
                the largest amax of the previous steps (an amax history), not from the tensor being cast
    mxfp8       OCP Microscaling MXFP8 (torchao `to_mx`, TE MXFP8BlockScaling): e4m3 everywhere, blocks of 32
                along the contraction axis, one e8m0 (power of two) scale per block
    nvfp4       NVFP4 (torchao NVFP4Tensor, TE NVFP4BlockScaling): e2m1 elements, blocks of 16, one e4m3 scale per
                block under one fp32 scale per tensor
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RECIPES", "RECIPE_NAMES", "ROLES", "Recipe", "recipe"]

ROLES: tuple[str, ...] = ("input", "weight", "grad_output")


@dataclass(frozen=True)
class Recipe:
    """How one recipe stores GEMM operands. Format names are mpviz.formats' canonical names."""

    name: str
    forward_format: str  # element format of `input` and `weight`
    gradient_format: str  # element format of `grad_output`
    granularity: str  # "tensor" | "row" | "block": who shares one scale
    scale_format: str  # the format a scale is stored in: "float32", "float8_e8m0fnu", "float8_e4m3fn"
    block_size: int = 0  # elements per block along the contraction axis (granularity "block")
    power_of_two_scales: bool = False  # scales rounded down to a power of two (torchao's rowwise recipe)
    amax_history: int = 0  # > 0: delayed scaling, the scale comes from the largest of this many past amaxes
    tensor_scale: bool = False  # a second, per-tensor fp32 scale above the block scales (NVFP4)
    source: str = ""  # where the recipe is defined (a library and the name it has there)

    def element_format(self, role: str) -> str:
        """The element format an operand with this role is stored in."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
        return self.gradient_format if role == "grad_output" else self.forward_format

    @property
    def scaled_mm(self) -> bool:
        """Whether torch._scaled_mm takes this recipe's scales: one fp32 scale per tensor or per row. Block
        scales (e8m0, e4m3) are a CUDA-only layout (swizzled) that this torch's CPU kernel refuses, so those
        GEMMs are emulated: the operands dequantised, then multiplied in float32."""
        return self.granularity in ("tensor", "row")


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            "tensorwise",
            "float8_e4m3fn",
            "float8_e5m2",
            "tensor",
            "float32",
            source="torchao Float8LinearConfig.from_recipe_name('tensorwise')",
        ),
        Recipe(
            "rowwise",
            "float8_e4m3fn",
            "float8_e4m3fn",
            "row",
            "float32",
            power_of_two_scales=True,
            source="torchao Float8LinearConfig.from_recipe_name('rowwise')",
        ),
        Recipe(
            "delayed",
            "float8_e4m3fn",
            "float8_e5m2",
            "tensor",
            "float32",
            amax_history=4,
            source="Transformer Engine DelayedScaling(fp8_format=Format.HYBRID)",
        ),
        Recipe(
            "mxfp8",
            "float8_e4m3fn",
            "float8_e4m3fn",
            "block",
            "float8_e8m0fnu",
            block_size=32,
            source="OCP Microscaling Formats v1.0 (torchao to_mx, Transformer Engine MXFP8BlockScaling)",
        ),
        Recipe(
            "nvfp4",
            "float4_e2m1fn",
            "float4_e2m1fn",
            "block",
            "float8_e4m3fn",
            block_size=16,
            tensor_scale=True,
            source="torchao NVFP4Tensor, Transformer Engine NVFP4BlockScaling",
        ),
    )
}
RECIPE_NAMES: tuple[str, ...] = tuple(RECIPES)


def recipe(name: str) -> Recipe:
    """The recipe with this name (ValueError naming the choices if there is none)."""
    try:
        return RECIPES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown recipe {name!r}; recipes: {', '.join(RECIPE_NAMES)}") from None
