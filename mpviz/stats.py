"""Value statistics of tensors, measured against the ranges of the low-precision formats.

Ranges (`FormatRange`) come from `mpviz.formats.FormatSpec` (read from ml_dtypes / finfo at run time) and agree
with `mpviz.formats.encode`'s exact round-to-nearest-even: a value overflows format F when rounding carries it
past F's max (what it then becomes is F's: inf, NaN, or saturation at max), and underflows when it rounds to zero.
Where the tie at a threshold goes depends on the parity of the neighbouring pattern, so each threshold carries
whether it is inclusive: fp16's 65520 becomes inf, e4m3fn's 464 stays 448.

Statistics (`TensorStats`) are exact and independent of element order, so a view, a reshape or a copy of a tensor
has exactly the statistics of its source:
- counts, min/max and the exponent histogram are exact by nature (a zero min/max is reported as +0.0);
- mean is the float64 nearest to the exact mean; std is √ of the float64 nearest to the exact population variance.
  Both come from exact integer sums: every float32 (float64) value is an integer times a power of two, and those
  integers are summed per group of exponents in int64 without overflow (see `_Layout`).

`StatsBatch` measures many tensors together: `add` copies a small tensor's values (one cast, no reference kept to
the tensor) and the statistics of everything added are computed in a few vectorized passes over blocks of 32k
values, flushed whenever the pending values pass `max_pending`; a large tensor is streamed through one reused
block at once. Memory stays bounded however large the tensors. `tensor_stats(t)` is the same for one tensor.

Sampling, for tracing models at real size (`StatsBatch(sample_above=n)`; off by default): a tensor of more than n
elements is read once, on its own device, by torch (min, max, the non-finite counts and the overflow counts stay
exact: one `aminmax` pass, and a counting pass only when a value reaches a threshold), while the statistics that
need every value's bits (mean, std, zero and subnormal counts, underflow shares, the exponent histogram) come from
`SAMPLE_SIZE` elements evenly spaced through its memory: `TensorStats.sampled` says how many (0: all of them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np
import torch

from mpviz.formats import encode, resolve_format

# Formats every floating tensor is checked against ("what if this were stored in …").
RANGE_FORMATS: tuple[torch.dtype, ...] = (torch.float16, torch.bfloat16, torch.float8_e4m3fn)


def dtype_name(dtype: torch.dtype) -> str:
    """torch's dtype name without the 'torch.' prefix: torch.bfloat16 → 'bfloat16'."""
    return str(dtype).removeprefix("torch.")


def _what_is(value: float) -> str:
    """What a stored value past the finite range is: "inf", "nan", or "saturate" (± the format's max)."""
    return "nan" if math.isnan(value) else ("inf" if math.isinf(value) else "saturate")


@dataclass(frozen=True)
class FormatRange:
    """Range facts of one format, from `mpviz.formats.FormatSpec`, thresholds checked against `formats.encode`."""

    dtype: str
    max: float
    smallest_normal: float
    smallest_subnormal: float  # == smallest_normal for a format without subnormals
    overflow_at: float  # |x| above this (or at it, when overflow_inclusive) rounds past max
    underflow_at: float  # 0 < |x| below this (or at it, when underflow_inclusive) rounds to zero; 0.0: never
    overflow_inclusive: bool = True  # the tie at overflow_at rounds up (fp16: 65520 → inf) or not (e4m3fn: 464 → 448)
    underflow_inclusive: bool = True  # the tie at underflow_at rounds to zero (ties to even: 0 is even)
    overflow_to: str = "inf"  # what a value past max becomes, exactly rounded (as ml_dtypes): "inf"|"nan"|"saturate"
    torch_overflow_to: str | None = None  # what torch's cast makes of it (measured; e4m3fn saturates); None: no dtype

    @classmethod
    def of(cls, dtype: torch.dtype | str) -> FormatRange:
        return _format_range(dtype_name(dtype) if isinstance(dtype, torch.dtype) else str(dtype))

    def overflows(self, magnitude: float) -> bool:
        """Whether a finite |x| = `magnitude` rounds past max."""
        return magnitude > self.overflow_at or (self.overflow_inclusive and magnitude == self.overflow_at)

    def underflows(self, magnitude: float) -> bool:
        """Whether a non-zero |x| = `magnitude` rounds to zero."""
        return magnitude < self.underflow_at or (self.underflow_inclusive and magnitude == self.underflow_at)


@cache
def _format_range(name: str) -> FormatRange:
    spec = resolve_format(name)
    # Halfway between max and the next pattern up (an unbounded exponent range's): where rounding leaves the range.
    over = spec.max + math.ldexp(1.0, spec.emax - spec.mantissa_bits) / 2
    if math.isinf(over):  # float64: the threshold lies past every float64, so no finite value overflows
        return _widest_range(spec)
    over_enc = encode(over, spec)
    # Halfway between zero and the smallest positive value; nothing rounds to zero in a format without one.
    under = spec.smallest_subnormal / 2 if spec.has_zero else 0.0
    under_incl = spec.has_zero and encode(under, spec).underflow
    for x, expect in ((math.nextafter(over, 0), False), (math.nextafter(over, math.inf), True)):
        if encode(x, spec).overflow != expect:  # the derivation above must be what encode does
            raise RuntimeError(f"{name}: overflow threshold {over!r} disagrees with formats.encode at {x!r}")
    if spec.has_zero and not (
        encode(math.nextafter(under, math.inf), spec).value > 0 and encode(under / 2, spec).underflow
    ):
        raise RuntimeError(f"{name}: underflow threshold {under!r} disagrees with formats.encode")
    torch_to = None
    if spec.torch_dtype is not None:  # measured: torch's cast of the first float32 past the threshold
        past = torch.tensor(math.nextafter(over, math.inf), dtype=torch.float64).to(torch.float32)
        past = past if float(past) > over else torch.nextafter(past, torch.tensor(math.inf))
        torch_to = _what_is(float(past.to(getattr(torch, spec.torch_dtype)).double()))
    return FormatRange(
        dtype=spec.name,
        max=spec.max,
        smallest_normal=spec.smallest_normal,
        smallest_subnormal=spec.smallest_subnormal,
        overflow_at=over,
        underflow_at=under,
        overflow_inclusive=over_enc.overflow,
        underflow_inclusive=under_incl,
        overflow_to=_what_is(encode(2 * over, spec).value),
        torch_overflow_to=torch_to,
    )


def _widest_range(spec) -> FormatRange:
    """The range of a format whose overflow threshold no float64 reaches (float64 itself): nothing finite overflows,
    and 0 < |x| at or below half its smallest subnormal rounds to zero."""
    under = spec.smallest_subnormal / 2
    return FormatRange(
        dtype=spec.name,
        max=spec.max,
        smallest_normal=spec.smallest_normal,
        smallest_subnormal=spec.smallest_subnormal,
        overflow_at=math.inf,
        underflow_at=under,
        overflow_inclusive=False,
        underflow_inclusive=encode(under, spec).underflow,
        overflow_to="inf",
        torch_overflow_to=None,
    )


@dataclass(frozen=True)
class TensorStats:
    """Summary of a floating tensor's values in its own dtype. NaN/inf are counted, not folded into min/max."""

    numel: int
    min: float  # over finite values (nan when there are none); a zero min is +0.0
    max: float
    abs_max: float
    mean: float  # exact mean of the finite values, rounded once to float64
    std: float  # population std: √(exact variance rounded to float64)
    nan: int
    posinf: int
    neginf: int
    zero: int
    subnormal: int  # 0 < |x| < smallest normal of the tensor's own dtype
    overflow_frac: dict[str, float]  # per format: share of elements, finite here, that would round past its max
    underflow_frac: dict[str, float]  # per format name: share of elements, non-zero here, that would become 0
    log2_hist: tuple[tuple[int, int], ...]  # (floor(log2|x|), count) for finite non-zero x, ascending
    # 0: every statistic read every element. Else mean, std, zero, subnormal, underflow_frac and log2_hist are
    # estimated from this many evenly spaced elements (counts scaled to numel); the rest stays exact.
    sampled: int = 0

    @property
    def nonfinite(self) -> int:
        return self.nan + self.posinf + self.neginf


# ── the exact, batched measurement ──────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class _Layout:
    """How values of one working float type are taken apart: |x| = M · 2^(E' − scale), M an integer below
    2^(man+1), E' = max(biased exponent, 1). Exact sums: E' = 8g + r, so x = (M << r) · 2^(8g − scale), and per
    (tensor, g) Σ(M << r) and Σ(M << r)² are accumulated in int64 without overflow. float32: M << r < 2^31 is
    summed whole and its square (< 2^62) in two 31-bit halves; float64: in 16-bit limbs and their pairwise
    products (< 2^33). `block` elements per pass keep every such sum below 2^63."""

    float: type
    int: type
    man: int  # stored mantissa bits
    exp_top: int  # all-ones exponent field (inf / nan)
    scale: int  # bias + man
    limbs: int  # 16-bit limbs of M << r for the sums (1: whole, and its square in two 31-bit halves)
    block: int  # elements per pass: small enough to stay in cache (exact up to 2^29)

    @property
    def n_groups(self) -> int:
        return (self.exp_top + 1) >> 3

    @property
    def bias(self) -> int:
        return self.scale - self.man


_F32 = _Layout(np.float32, np.int32, 23, 255, 150, 1, 1 << 15)
_F64 = _Layout(np.float64, np.int64, 52, 2047, 1075, 4, 1 << 15)
_LAYOUTS = {np.dtype(np.float32): _F32, np.dtype(np.float64): _F64}
MAX_PENDING = 1 << 22  # elements copied before a flush: 16 MiB of float32
SAMPLE_SIZE = 1 << 13  # elements a sampled tensor's estimates come from: the mean to ~1% of the std
SAMPLE_BATCH = 256  # samples estimated together (8 MiB of float32 at most waiting)


def work_dtype(dtype: torch.dtype) -> torch.dtype:
    """Where a floating dtype's values are measured: float64 stays, everything narrower is exact in float32."""
    return torch.float64 if dtype == torch.float64 else torch.float32


@cache
def _normal_field(dtype: torch.dtype, layout: _Layout) -> int:
    """Exponent field, in the working type, of `dtype`'s smallest normal (a power of two)."""
    return _bits(float(torch.finfo(dtype).smallest_normal), layout) >> layout.man


def _bits(x: float, layout: _Layout) -> int:
    return int(np.array(x, dtype=layout.float).view(layout.int))


def _at_least(t: float, inclusive: bool, layout: _Layout) -> int:
    """Bit pattern of the smallest |x| of the working type with x ≥ t (x > t when not inclusive); inf's if none."""

    def ok(v) -> bool:
        return v > t or (inclusive and v == t)

    with np.errstate(over="ignore"):
        v = layout.float(t)  # nearest: the answer is v or its neighbour up
    while not ok(v):
        v = np.nextafter(v, layout.float(math.inf))
    while (prev := np.nextafter(v, layout.float(0))) > 0 and ok(prev):
        v = prev
    return _bits(float(v), layout)


def _at_most(t: float, inclusive: bool, layout: _Layout) -> int:
    """Bit pattern of the largest |x| of the working type with x ≤ t (x < t when not inclusive); 0 if none."""

    def ok(v) -> bool:
        return v < t or (inclusive and v == t)

    with np.errstate(over="ignore"):
        v = min(layout.float(t), np.finfo(layout.float).max)
    while v > 0 and not ok(v):
        v = np.nextafter(v, layout.float(0))
    while math.isfinite(nxt := np.nextafter(v, layout.float(math.inf))) and ok(nxt):
        v = nxt
    return _bits(float(v), layout) if ok(v) else 0


@cache
def _thresholds(layout: _Layout) -> tuple[tuple[str, int, int], ...]:
    """Per range format: (name, smallest overflowing |x| pattern, largest underflowing |x| pattern)."""
    out = []
    for dt in RANGE_FORMATS:
        r = FormatRange.of(dt)
        under = _at_most(r.underflow_at, r.underflow_inclusive, layout) if r.underflow_at > 0 else 0
        out.append((r.dtype, _at_least(r.overflow_at, r.overflow_inclusive, layout), under))
    return tuple(out)


class _Block(NamedTuple):
    """What one block says about each of its pieces (rows: pieces, in order)."""

    counts: np.ndarray  # (pieces, _COLUMNS) int64: zero, nan, +inf, -inf, subnormal, overflow…, underflow…
    mn: np.ndarray  # min over finite values (NaN: none)
    mx: np.ndarray
    n1: list[int]  # Σx · 2^scale, exact
    n2: list[int]  # Σx² · 2^(2·scale), exact
    hist: tuple[np.ndarray, np.ndarray, np.ndarray]  # (piece, floor(log2|x|), count) of every non-empty bin


def _sums(keys: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Per key in [0, size): the sum of the int64 `weights`, exactly (torch's scatter_add accumulates in int64,
    and is ~4x faster here than numpy's float64 bincount)."""
    out = torch.zeros(size, dtype=torch.int64)
    return out.scatter_add_(0, torch.from_numpy(keys), torch.from_numpy(weights)).numpy()


def _measure_block(x: np.ndarray, starts: np.ndarray, normal_fields: np.ndarray, layout: _Layout) -> _Block:
    """Measure one block: pieces of tensors back to back (each non-empty, starting at `starts`), piece p's own
    dtype having its smallest normal at exponent field `normal_fields[p]` of the working type."""
    P, top, man, width = len(starts), layout.exp_top, layout.man, layout.exp_top + 1
    u = x.view(layout.int)
    a = u & layout.int(np.iinfo(layout.int).max)  # |x| as bits: ordered like the magnitudes
    e = a >> man  # exponent field; 0: zero or subnormal, top: inf or nan
    if P == 1:  # one piece (a large tensor, streamed)
        key = e.astype(np.intp)
    else:
        key = np.repeat(np.arange(0, P * width, width, dtype=np.intp), np.diff(starts, append=x.size))
        key += e  # piece · width + field
    hist = np.bincount(key, minlength=P * width).reshape(P, width)
    cum = hist.cumsum(axis=1)  # cum[p, k]: values of piece p with exponent field ≤ k
    low, special = hist[:, 0], hist[:, top]
    none = np.zeros(P, np.int64)
    zero = np.add.reduceat(a == 0, starts, dtype=np.int64) if low.any() else none
    tiny = (low - zero).any()  # subnormals of the working type
    inf_bits = layout.int(top) << man
    if special.any():
        nan = np.add.reduceat(a > inf_bits, starts, dtype=np.int64)
        posinf = np.add.reduceat(u == inf_bits, starts, dtype=np.int64)
        neginf = special - nan - posinf
        xf = np.where(a >= inf_bits, layout.float(math.nan), x)  # fmin/fmax skip NaN: min/max over finite
        mn, mx = np.fmin.reduceat(xf, starts), np.fmax.reduceat(xf, starts)
    else:
        nan = posinf = neginf = none
        mn, mx = np.minimum.reduceat(x, starts), np.maximum.reduceat(x, starts)

    def boundary(f: int, lo: int, hi: int) -> np.ndarray:
        """Per piece: values with exponent field `f` whose |x| bits lie in [lo, hi]."""
        if not hist[:, f].any():
            return none
        return np.add.reduceat((e == f) & (a >= lo) & (a <= hi), starts, dtype=np.int64)

    def at_least(b: int) -> np.ndarray:  # finite values with |x| bits ≥ b
        f = b >> man
        return none if f >= top else cum[:, top - 1] - cum[:, f] + boundary(f, b, inf_bits - 1)

    def at_most(b: int) -> np.ndarray:  # non-zero values with |x| bits ≤ b
        f = b >> man
        if b <= 0:
            return none
        return (cum[:, f - 1] - zero if f >= 1 else none) + boundary(f, 1, b)

    thresholds = _thresholds(layout)
    subnormal = cum[np.arange(P), normal_fields - 1] - zero  # own smallest normal: a power of two
    counts = np.column_stack(
        [zero, nan, posinf, neginf, subnormal]
        + [at_least(over) for _, over, _ in thresholds]
        + [at_most(under) for _, _, under in thresholds]
    )

    # Exact sums: M' = M << r with r = E' mod 8, summed per (piece, g = E' div 8) = key >> 3 (width is 8·groups).
    m = a & layout.int((1 << man) - 1)
    m |= np.minimum(e, 1) << man  # the implicit leading 1 of normals
    if special.any():
        m[e == top] = 0
    if tiny:  # a subnormal's E' is 1, not its field 0
        m[e == 0] <<= 1
    m <<= e & 7
    gkey = key >> 3
    size = P * layout.n_groups
    sign = u >> (8 * u.itemsize - 1)  # 0, or -1 for a negative x: (v ^ sign) - sign is ±v
    if layout.limbs == 1:
        s1 = [(0, 1, _sums(gkey, ((m ^ sign) - sign).astype(np.int64), size))]
        sq = m.astype(np.int64)
        sq *= sq
        s2 = [(31, 1, _sums(gkey, sq >> 31, size)), (0, 1, _sums(gkey, sq & 0x7FFFFFFF, size))]
    else:
        limbs = [(m >> (16 * i)) & 0xFFFF for i in range(layout.limbs)]
        s1 = [(16 * i, 1, _sums(gkey, (v ^ sign) - sign, size)) for i, v in enumerate(limbs)]
        s2 = [
            (16 * (i + j), 1 if i == j else 2, _sums(gkey, limbs[i] * limbs[j], size))
            for i in range(layout.limbs)
            for j in range(i, layout.limbs)
        ]
    occupied = np.flatnonzero(hist.reshape(size, 8).any(axis=1))  # (piece, group) pairs holding values
    s1_at = [(shift, c, v.take(occupied).tolist()) for shift, c, v in s1]
    s2_at = [(shift, c, v.take(occupied).tolist()) for shift, c, v in s2]
    n1, n2 = [0] * P, [0] * P
    for k, flat in enumerate(occupied.tolist()):
        p, g = divmod(flat, layout.n_groups)
        n1[p] += sum(c * v[k] << shift for shift, c, v in s1_at) << (8 * g)
        n2[p] += sum(c * v[k] << shift for shift, c, v in s2_at) << (16 * g)

    pi, fi = np.nonzero(hist[:, 1:top])  # normals: floor(log2|x|) = field − bias
    entries = (pi, fi + 1 - layout.bias, hist[pi, fi + 1])
    if tiny:  # the working type's subnormals: floor(log2|x|) from their leading bit
        sub = (e == 0) & (a != 0)
        pieces = np.repeat(np.arange(P), np.diff(starts, append=x.size))[sub]
        tiny_exps = np.frexp(x[sub])[1] - 1
        entries = tuple(np.concatenate(z) for z in zip(entries, (pieces, tiny_exps, np.ones_like(pieces)), strict=True))
    return _Block(counts, mn, mx, n1, n2, entries)


_COLUMNS = 5 + 2 * len(RANGE_FORMATS)


@cache
def _format_names() -> tuple[str, ...]:
    return tuple(dtype_name(d) for d in RANGE_FORMATS)


def _stats(numel: int, row: list[int], mn: float, mx: float, n1: int, n2: int, hist, scale: int) -> TensorStats:
    zero, nan, posinf, neginf, subnormal = row[:5]
    finite = numel - nan - posinf - neginf
    if finite:
        mean = n1 / (finite << scale)
        try:
            std = math.sqrt((finite * n2 - n1 * n1) / ((finite * finite) << (2 * scale)))
        except OverflowError:  # float64 values whose variance is past float64's range
            std = math.inf
        mn, mx = mn + 0.0, mx + 0.0  # -0.0 → 0.0: which zero a min is must not depend on order
        amax = max(abs(mn), abs(mx))
    else:
        mean = std = mn = mx = amax = math.nan
    names, denom, k = _format_names(), max(numel, 1), len(RANGE_FORMATS)
    return TensorStats(
        numel=numel,
        min=mn,
        max=mx,
        abs_max=amax,
        mean=mean,
        std=std,
        nan=nan,
        posinf=posinf,
        neginf=neginf,
        zero=zero,
        subnormal=subnormal,
        overflow_frac={n: c / denom for n, c in zip(names, row[5 : 5 + k], strict=True)},
        underflow_frac={n: c / denom for n, c in zip(names, row[5 + k :], strict=True)},
        log2_hist=hist,
    )


_KINDS = ("nan", "posinf", "neginf")


def _kinds(values: np.ndarray) -> frozenset[str]:
    """Which kinds of non-finite value a flat float array holds."""
    found = (np.isnan(values).any(), (values == math.inf).any(), (values == -math.inf).any())
    return frozenset(k for k, hit in zip(_KINDS, found, strict=True) if hit)


def _dense_flat(t: torch.Tensor) -> torch.Tensor:
    """`t`'s elements in memory order as a 1-D view when they fill their memory densely in some order (a transpose
    or permute of a contiguous tensor), else as a 1-D copy. Statistics do not depend on the order."""
    if t.is_contiguous():
        return t.view(-1)
    by_stride = t.permute(sorted(range(t.dim()), key=lambda d: (-t.stride(d), -t.shape[d])))
    return by_stride.view(-1) if by_stride.is_contiguous() else t.reshape(-1)


class Added(NamedTuple):
    """What `StatsBatch.add` took: the ticket for `result`, the copy (None when measured at once) and the kinds of
    non-finite value ("nan", "posinf", "neginf") among the values."""

    ticket: int
    values: np.ndarray | None
    nonfinite: frozenset[str]


class StatsBatch:
    """Statistics of many tensors measured together.

    `add(t)` copies `t`'s values to the working type at once (so later in-place changes to `t` do not matter, and
    no reference to `t` is kept) and returns a ticket; `result(ticket)` gives its `TensorStats`. Pending copies are
    measured whenever they pass `max_pending` elements and by `flush()`, then dropped.
    """

    def __init__(self, max_pending: int = MAX_PENDING, sample_above: int | None = None) -> None:
        self.max_pending = max_pending
        # tensors larger than this are sampled (see the module docstring); None: every tensor measured in full
        self.sample_above = None if sample_above is None else max(sample_above, SAMPLE_SIZE)
        self._sampled: dict[int, _Exact] = {}  # ticket of a sampled tensor → what was read of it in full
        # samples waiting to be estimated, per (working type, length): (ticket, values, own smallest normal's field)
        self._samples: dict[tuple[_Layout, int], list[tuple[int, np.ndarray, int]]] = {}
        self._estimates: dict[int, _Estimate] = {}  # ticket of a sampled tensor → its sample's estimates
        self._pending: dict[_Layout, list[tuple[int, np.ndarray]]] = {_F32: [], _F64: []}
        self._size = 0
        self.flushes = 0  # how many times pending copies were measured and dropped
        self._numel: list[int] = []
        self._normal: list[int] = []  # per ticket: exponent field of its dtype's smallest normal
        self._layouts: list[_Layout] = []
        self._blocks: list[tuple[np.ndarray, _Block]] = []  # (ticket of each piece, what the block measured)
        self._results: list[TensorStats] = []
        self._buffers: dict[_Layout, torch.Tensor] = {}  # per working type: the block that large tensors stream through

    def add(self, t: torch.Tensor) -> Added:
        """Take `t`'s values (floating, with values: not meta/fake) for measuring.

        Up to a block's worth, they are copied and measured with the rest later (`Added.values` is that copy,
        read-only to the caller, valid until the next `add` or `flush`); larger tensors are measured at once,
        streamed through one reused buffer, so no large copy is ever made (`Added.values` is None).
        """
        t = t.detach() if t.requires_grad else t
        layout = _F64 if t.dtype == torch.float64 else _F32
        if self.sample_above is not None and t.numel() > self.sample_above:
            return self._add_sampled(t, layout)
        if t.numel() <= layout.block:
            values = t.to("cpu", work_dtype(t.dtype), memory_format=torch.contiguous_format, copy=True)
            return self.add_values(values.numpy().reshape(-1), t.dtype)
        ticket = self._ticket(t.numel(), t.dtype, layout)
        buffer = self._buffers.get(layout)
        if buffer is None:
            buffer = self._buffers[layout] = torch.empty(layout.block, dtype=work_dtype(t.dtype))
        flat, normal, start0 = _dense_flat(t), np.array([self._normal[ticket]]), np.zeros(1, np.intp)
        nonfinite = np.zeros(3, np.int64)
        for start in range(0, flat.numel(), layout.block):
            piece = flat[start : start + layout.block]
            chunk = buffer[: piece.numel()]
            chunk.copy_(piece)
            block = _measure_block(chunk.numpy(), start0, normal, layout)
            self._blocks.append((np.array([ticket]), block))
            nonfinite += block.counts[0, 1:4]
        return Added(ticket, None, frozenset(k for k, c in zip(_KINDS, nonfinite.tolist(), strict=True) if c))

    def _add_sampled(self, t: torch.Tensor, layout: _Layout) -> Added:
        """A large tensor: exact extremes and counts read in full by torch, the rest from an even sample."""
        flat = _dense_flat(t)  # memory order: a transpose or permute of a tensor samples the same elements
        stride = flat.numel() // SAMPLE_SIZE
        picked = flat[::stride][:SAMPLE_SIZE].to("cpu", work_dtype(t.dtype), copy=True).numpy().reshape(-1)
        exact = _read_in_full(flat, layout)
        ticket = self._ticket(flat.numel(), t.dtype, layout)
        self._sampled[ticket] = exact
        pending = self._samples.setdefault((layout, picked.size), [])
        pending.append((ticket, picked, self._normal[ticket]))
        if len(pending) >= SAMPLE_BATCH:
            self._estimate(layout, picked.size)
        kinds = frozenset(k for k, c in zip(_KINDS, (exact.nan, exact.posinf, exact.neginf), strict=True) if c)
        return Added(ticket, None, kinds)

    def add_values(self, values: np.ndarray, dtype: torch.dtype) -> Added:
        """Like `add` for values already copied to the working type (float32, or float64 for float64 `dtype`)."""
        layout = _LAYOUTS[values.dtype]
        ticket = self._ticket(values.size, dtype, layout)
        nonfinite = frozenset()
        if values.size:
            self._pending[layout].append((ticket, values))
            self._size += values.size
            if not np.isfinite(values).all():
                nonfinite = _kinds(values)
            if self._size >= self.max_pending:
                self.flush()
        return Added(ticket, values, nonfinite)

    def _ticket(self, numel: int, dtype: torch.dtype, layout: _Layout) -> int:
        self._numel.append(numel)
        self._normal.append(_normal_field(dtype, layout))
        self._layouts.append(layout)
        return len(self._numel) - 1

    def flush(self) -> None:
        """Measure everything pending."""
        for layout, items in self._pending.items():
            block: list[tuple[int, np.ndarray]] = []
            filled = 0
            for ticket, values in items:
                for start in range(0, values.size, layout.block):  # a tensor larger than a block: in pieces
                    piece = values[start : start + layout.block]
                    if filled + piece.size > layout.block:
                        self._measure(block, layout)
                        block, filled = [], 0
                    block.append((ticket, piece))
                    filled += piece.size
            if block:
                self._measure(block, layout)
            items.clear()
        for layout, size in list(self._samples):
            self._estimate(layout, size)
        self._size = 0
        self.flushes += 1

    def _estimate(self, layout: _Layout, size: int) -> None:
        """Estimate the pending samples of one working type and length, all together, then drop them."""
        items = self._samples.pop((layout, size))
        rows = np.stack([values for _, values, _ in items])
        normal = np.array([field for _, _, field in items])
        for (ticket, _, _), estimate in zip(items, _estimate_rows(rows, normal, layout), strict=True):
            self._estimates[ticket] = estimate

    def _measure(self, block: list[tuple[int, np.ndarray]], layout: _Layout) -> None:
        x = block[0][1] if len(block) == 1 else np.concatenate([v for _, v in block])
        starts = np.cumsum([0] + [v.size for _, v in block[:-1]])
        tickets = np.array([t for t, _ in block])
        normal = np.array([self._normal[t] for t, _ in block])
        self._blocks.append((tickets, _measure_block(x, starts, normal, layout)))

    def result(self, ticket: int) -> TensorStats:
        if ticket >= len(self._results):
            self.flush()
            self._results = self._combine()
        return self._results[ticket]

    def _combine(self) -> list[TensorStats]:
        """Every ticket's statistics from the pieces measured so far."""
        T = len(self._numel)
        counts = np.zeros((T, _COLUMNS), np.int64)
        mn, mx = np.full(T, math.nan), np.full(T, math.nan)
        n1, n2 = [0] * T, [0] * T
        entries = []
        for tickets, b in self._blocks:
            np.add.at(counts, tickets, b.counts)
            np.fmin.at(mn, tickets, b.mn)  # NaN (no finite value yet) loses to any number
            np.fmax.at(mx, tickets, b.mx)
            for p, t in enumerate(tickets.tolist()):
                n1[t] += b.n1[p]
                n2[t] += b.n2[p]
            pieces, exps, cnts = b.hist
            entries.append((tickets[pieces], exps, cnts))
        hists = self._histograms(entries, T)
        rows, mns, mxs = counts.tolist(), mn.tolist(), mx.tolist()
        out = [
            _stats(self._numel[t], rows[t], mns[t], mxs[t], n1[t], n2[t], hists[t], self._layouts[t].scale)
            for t in range(T)
        ]
        for t, exact in self._sampled.items():
            out[t] = _with_sample(self._numel[t], exact, self._estimates[t])
        return out

    @staticmethod
    def _histograms(entries, T: int) -> list[tuple[tuple[int, int], ...]]:
        """Per ticket: (exponent, count) ascending, bins of the same ticket and exponent from several pieces summed."""
        if not entries:
            return [()] * T
        tickets, exps, cnts = (np.concatenate(z) for z in zip(*entries, strict=True))
        key = tickets.astype(np.int64) * 8192 + (exps + 4096)  # float64 exponents lie in [-1074, 1023]
        bins, where = np.unique(key, return_inverse=True)
        total = np.bincount(where, weights=cnts).astype(np.int64).tolist()
        exps, owner = (bins % 8192 - 4096).tolist(), bins // 8192
        bounds = np.searchsorted(owner, np.arange(T + 1)).tolist()
        return [
            tuple(zip(exps[bounds[t] : bounds[t + 1]], total[bounds[t] : bounds[t + 1]], strict=True)) for t in range(T)
        ]


class _Exact(NamedTuple):
    """What a sampled tensor's single full pass reads exactly (min/max over finite values, nan when none)."""

    min: float
    max: float
    nan: int
    posinf: int
    neginf: int
    overflow: tuple[int, ...]  # per range format: finite values that would round past its max


def _read_in_full(flat: torch.Tensor, layout: _Layout) -> _Exact:
    """One `aminmax` pass over `flat` on its own device (NaN propagates through it, infinities show in it); the
    non-finite values are counted only when there are some, and the values past a format's overflow threshold
    only when the largest magnitude reaches it (compared as bits of the working type, as `_measure_block` does)."""
    if flat.numel() == 0:
        return _Exact(math.nan, math.nan, 0, 0, 0, (0,) * len(RANGE_FORMATS))
    if flat.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):  # fp8: no aminmax kernel
        flat = flat.to(work_dtype(flat.dtype))
    lo, hi = (float(v) for v in torch.aminmax(flat))
    nan = posinf = neginf = 0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        nan, posinf = int(flat.isnan().sum()), int((flat == math.inf).sum())
        neginf = int((flat == -math.inf).sum())
        finite = flat[flat.isfinite()]
        lo, hi = (float(v) for v in torch.aminmax(finite)) if finite.numel() else (math.nan, math.nan)
    amax = max(abs(lo), abs(hi)) if math.isfinite(lo) else 0.0
    overflow, bits = [], None
    for dt, (_, over, _) in zip(RANGE_FORMATS, _thresholds(layout), strict=True):
        if not FormatRange.of(dt).overflows(amax):
            overflow.append(0)
            continue
        if bits is None:  # |x| as bits of the working type, ordered like the magnitudes; NaN and inf lie above all
            int_type = torch.int64 if layout is _F64 else torch.int32
            w = flat.to(work_dtype(flat.dtype)).view(int_type)
            bits = w & torch.iinfo(int_type).max
        overflow.append(int((bits >= over).sum()) - nan - posinf - neginf)
    return _Exact(lo + 0.0, hi + 0.0, nan, posinf, neginf, tuple(overflow))


class _Estimate(NamedTuple):
    """What a sample says of its tensor: the statistics that need every value's bits, of the sample's values."""

    numel: int  # the sample's elements
    mean: float  # of its finite values (nan when none)
    std: float  # population std of its finite values
    zero: int
    subnormal: int  # 0 < |x| < the smallest normal of the tensor's own dtype
    underflow_frac: dict[str, float]  # per range format: share of the sample, non-zero, that would round to zero
    log2_hist: tuple[tuple[int, int], ...]  # (floor(log2|x|), count) of its finite non-zero values, ascending


def _estimate_rows(rows: np.ndarray, normal_fields: np.ndarray, layout: _Layout) -> list[_Estimate]:
    """`_Estimate` of each row of `rows` (samples of one length, in the working type), all rows in a few
    vectorized passes. Counts and the histogram are exact counts of the sample; mean and std are float64 sums
    (the sample's own error is far larger than their rounding)."""
    P, n = rows.shape
    top, man, width = layout.exp_top, layout.man, layout.exp_top + 1
    a = rows.view(layout.int) & layout.int(np.iinfo(layout.int).max)  # |x| as bits: ordered like the magnitudes
    e = a >> man  # exponent field; 0: zero or subnormal, top: inf or nan
    hist = np.bincount((e + np.arange(0, P * width, width)[:, None]).ravel(), minlength=P * width).reshape(P, width)
    cum = hist.cumsum(axis=1)
    zero = (a == 0).sum(axis=1) if hist[:, 0].any() else np.zeros(P, np.int64)
    finite = n - hist[:, top]
    x = rows.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if hist[:, top].any():  # nan and ±inf take no part in mean and std
            x[e == top] = math.nan
            mean = np.nansum(x, axis=1) / finite
            std = np.sqrt(np.nansum(np.square(x - mean[:, None]), axis=1) / finite)
        else:
            mean = x.sum(axis=1) / n
            x -= mean[:, None]
            std = np.sqrt(np.square(x, out=x).sum(axis=1) / n)
    subnormal = cum[np.arange(P), normal_fields - 1] - zero  # own smallest normal: a power of two
    underflow = []
    for _, _, under in _thresholds(layout):  # non-zero values with |x| bits ≤ the largest that rounds to zero
        underflow.append(((a <= under) & (a != 0)).sum(axis=1) if under else np.zeros(P, np.int64))
    # floor(log2|x|): a normal's exponent field − bias; the working type's subnormals from their leading bit
    hists: list[dict[int, int]] = [{} for _ in range(P)]
    if (hist[:, 0] > zero).any():
        pi, si = np.nonzero((e == 0) & (a != 0))
        for p, exp in zip(pi.tolist(), (np.frexp(rows[pi, si])[1] - 1).tolist(), strict=True):
            hists[p][exp] = hists[p].get(exp, 0) + 1
    pi, fi = np.nonzero(hist[:, 1:top])
    for p, f, c in zip(pi.tolist(), (fi + 1 - layout.bias).tolist(), hist[pi, fi + 1].tolist(), strict=True):
        hists[p][f] = c
    names = _format_names()
    return [
        _Estimate(
            numel=n,
            mean=float(mean[p]) if finite[p] else math.nan,
            std=float(std[p]) if finite[p] else math.nan,
            zero=int(zero[p]),
            subnormal=int(subnormal[p]),
            underflow_frac={name: int(c[p]) / n for name, c in zip(names, underflow, strict=True)},
            log2_hist=tuple(sorted(hists[p].items())),
        )
        for p in range(P)
    ]


def _with_sample(numel: int, exact: _Exact, sample: _Estimate) -> TensorStats:
    """A sampled tensor's statistics: `exact`'s where they were read in full, the sample's estimates elsewhere."""
    scale = numel / max(sample.numel, 1)
    finite = math.isfinite(exact.min)
    return TensorStats(
        numel=numel,
        min=exact.min,
        max=exact.max,
        abs_max=max(abs(exact.min), abs(exact.max)) if finite else math.nan,
        mean=sample.mean if finite else math.nan,
        std=sample.std if finite else math.nan,
        nan=exact.nan,
        posinf=exact.posinf,
        neginf=exact.neginf,
        zero=round(sample.zero * scale),
        subnormal=round(sample.subnormal * scale),
        overflow_frac={n: c / numel for n, c in zip(_format_names(), exact.overflow, strict=True)},
        underflow_frac=sample.underflow_frac,
        log2_hist=tuple((e, round(c * scale)) for e, c in sample.log2_hist),
        sampled=sample.numel,
    )


def tensor_stats(t: torch.Tensor) -> TensorStats:
    """Measure `t` (any floating dtype, any device with values)."""
    batch = StatsBatch()
    return batch.result(batch.add(t).ticket)


def sample_of(values: np.ndarray, shape: tuple[int, ...], max_side: int, max_mats: int) -> np.ndarray:
    """`sample_values` of a tensor of `shape` whose row-major values are `values` (flat; a copy the caller owns:
    when the sample is all of it, the sample is a view of it)."""
    if len(shape) >= 2:
        rows, cols = shape[-2], shape[-1]
        mats = math.prod(shape[:-2])
        x = values.reshape(mats, rows, cols)[:max_mats, :max_side, :max_side]
    else:
        x = values.reshape(1, 1, -1)[:, :, : max_side * max_side]
    return x if x.size == values.size else x.copy()


def sample_values(t: torch.Tensor, max_side: int, max_mats: int) -> np.ndarray:
    """A bounded view of `t` for heatmaps and the element picker, as float32 (float64 stays float64).

    ≥2-D tensors → (m, r, c): the first `max_mats` matrices over the last two dims, cropped to max_side².
    0/1-D tensors → (1, 1, c) with the first max_side² elements. Values are exact (fp16/bf16 ⊂ fp32).
    """
    x = t.detach()
    if x.dim() >= 2:
        x = x.reshape(math.prod(x.shape[:-2]), x.shape[-2], x.shape[-1])[:max_mats, :max_side, :max_side]
    else:
        x = x.reshape(1, 1, -1)[:, :, : max_side * max_side]
    return x.to(device="cpu", dtype=work_dtype(x.dtype)).numpy().copy()
