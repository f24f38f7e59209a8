"""Softmax overflow lab: one row of logits through four softmax recipes in each number format, vs float64.

    logits (n,) ─ round to the format ─ naive | stable | torch | upcast ─ probs (n,) ─ metrics vs float64
                                                                        └─ loss ─ backward ─ d loss/d logits

Recipes ("methods"): naive = exp(x) / Σ exp(x); stable = the same after subtracting max(x) (log-sum-exp
trick); torch = `torch.softmax(x)`; upcast = `torch.softmax(x, dtype=torch.float32)` on the low-precision
input. Every threshold is measured from torch at run time (where exp overflows or flushes to zero, the spacing
of a format at a magnitude): bisection over real `torch.exp` calls and bit patterns, not tables.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import torch

from mpviz.formats import ALIASES, SHORT_NAMES, canonical_format_name
from mpviz.model import ConfigError
from mpviz.stats import dtype_name
from mpviz.trace import Trace

METHODS = ("naive", "stable", "torch", "upcast")
# dot: L = Σ vᵢ·pᵢ with a fixed value column v (what probs @ v feeds back); nll: L = −log p[float64's argmax]
LOSSES = ("dot", "nll")
_STORAGE = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float8_e4m3fn": torch.float8_e4m3fn,
}
FORMAT_NAMES = tuple(_STORAGE)  # "float32", "float16", "bfloat16", "float8_e4m3fn"
# Every spelling of those formats, read from the one format registry (mpviz.formats): "fp16", "half", "e4m3" …
FORMAT_ALIASES = {alias: name for alias, name in ALIASES.items() if name in _STORAGE}
_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # bit patterns by itemsize
_VALUE_SEED = 0  # seed of the fixed value column v of the "dot" loss


@dataclass(frozen=True)
class SoftmaxLimits:
    max_len: int = 8192  # logits per row
    max_abs_logit: float = 1e6  # finite logits only; −inf (a masked entry) is allowed
    max_points_per_decade: int = 50  # sweep resolution


LIMITS = SoftmaxLimits()


# ── formats ─────────────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Format:
    """Where the logits are stored and where the softmax arithmetic runs.

    `compute` is `storage` when torch has an exp kernel for it here, else float32 (measured by calling
    torch.exp: float8 formats have none, so their logits are rounded to float8, the recipes run in float32).
    """

    name: str  # torch's dtype name: "float16"
    storage: torch.dtype
    compute: torch.dtype


def _has_exp(dtype: torch.dtype) -> bool:
    try:
        torch.exp(torch.zeros(1, dtype=dtype))
    except (RuntimeError, NotImplementedError):
        return False
    return True


def parse_format(name: str) -> Format:
    """'fp16' | 'float16' | 'bf16' | 'fp32' | 'e4m3' | … → Format. Raises ConfigError for anything else."""
    try:
        key = canonical_format_name(name)
    except ValueError:
        key = None
    if key not in _STORAGE:
        raise ConfigError("dtype", name, tuple(SHORT_NAMES[n] for n in FORMAT_NAMES), "unknown format")
    storage = _STORAGE[key]
    return Format(key, storage, storage if _has_exp(storage) else torch.float32)


def round_to(values: torch.Tensor, fmt: Format) -> torch.Tensor:
    """`values` (float64) stored in `fmt` and handed to its arithmetic dtype (the second cast is exact).

    This is torch's own cast, which goes float64 → float32 → float16 (a value just below a float16 rounding
    midpoint can round up twice), exactly what happens to a float32 model tensor cast down.
    """
    return values.to(fmt.storage).to(fmt.compute)


# ── thresholds measured from torch ──────────────────────────────────────────────────────────────────────────
def _from_bits(bits: int, dtype: torch.dtype) -> float:
    """The value of `dtype` whose bit pattern is the non-negative integer `bits`."""
    return torch.tensor([bits], dtype=_INT_VIEW[dtype.itemsize]).view(dtype).item()


def _first_bits(dtype: torch.dtype, hits) -> int:
    """Smallest magnitude bit pattern b in (0, inf] with hits(b), by bisection (hits is monotone in b)."""
    lo = 0  # bit pattern of +0.0
    hi = torch.tensor([math.inf], dtype=dtype).view(_INT_VIEW[dtype.itemsize]).item()
    assert not hits(lo) and hits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if hits(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class ExpThresholds:
    """Where `torch.exp` in one dtype stops giving a finite, non-zero result (measured, not computed)."""

    dtype: str
    max: float  # torch.finfo(dtype).max
    log_max: float  # ln(max) in float64: the textbook threshold, for comparison
    overflow_from: float  # smallest x of the dtype with exp(x) = inf
    largest_finite_input: float  # the dtype's value just below overflow_from
    underflow_from: float  # largest x of the dtype with exp(x) = 0 (every smaller x too)
    smallest_nonzero_input: float  # the dtype's value just above underflow_from


def exp_thresholds(dtype: torch.dtype) -> ExpThresholds:
    """Bisect the dtype's bit patterns with real `torch.exp` calls (exp is monotone: bisection is exact)."""

    def exp_of(bits: int, sign: float) -> float:
        return torch.exp(torch.tensor([sign * _from_bits(bits, dtype)], dtype=dtype)).item()

    over = _first_bits(dtype, lambda b: math.isinf(exp_of(b, 1.0)))
    under = _first_bits(dtype, lambda b: exp_of(b, -1.0) == 0.0)
    fi = torch.finfo(dtype)
    return ExpThresholds(
        dtype=dtype_name(dtype),
        max=fi.max,
        log_max=math.log(fi.max),
        overflow_from=_from_bits(over, dtype),
        largest_finite_input=_from_bits(over - 1, dtype),
        underflow_from=-_from_bits(under, dtype),
        smallest_nonzero_input=-_from_bits(under - 1, dtype),
    )


def spacing(dtype: torch.dtype, x: float) -> float:
    """Gap between |x| stored in `dtype` and the next larger value of `dtype` (its ulp there).

    Two logits closer than this at that magnitude can round to the same stored value. At the format's largest
    finite value, where there is no next value, the gap below is returned.
    """
    v = torch.tensor([abs(x)], dtype=torch.float64).to(dtype)
    bits = v.view(_INT_VIEW[dtype.itemsize])
    up = (bits + 1).view(dtype).to(torch.float64).item()
    here = v.to(torch.float64).item()
    if not math.isfinite(up) or not math.isfinite(here):  # at max (or saturated): step down instead
        here = min(here, torch.finfo(dtype).max)
        down = torch.tensor([here], dtype=torch.float64).to(dtype).view(bits.dtype) - 1
        return here - down.view(dtype).to(torch.float64).item()
    return up - here


# ── input: logits, generators, scenarios ────────────────────────────────────────────────────────────────────
def check_logits(values) -> tuple[float, ...]:
    """`values` as a tuple of floats if it is a usable row, else ConfigError("logits", …).

    Usable: 1..LIMITS.max_len entries, no NaN or +inf, |x| ≤ LIMITS.max_abs_logit, at least one finite entry
    (−inf is allowed: it is how attention masks an entry).
    """
    row = tuple(float(v) for v in values)
    if not 1 <= len(row) <= LIMITS.max_len:
        raise ConfigError("logits", f"{len(row)} values", (1, LIMITS.max_len), "wrong number of logits")
    for v in row:
        if math.isnan(v) or v == math.inf:
            raise ConfigError("logits", v, "finite or -inf", "not a usable logit")
        if math.isfinite(v) and abs(v) > LIMITS.max_abs_logit:
            raise ConfigError("logits", v, LIMITS.max_abs_logit, "logit too large")
    if not any(math.isfinite(v) for v in row):
        raise ConfigError("logits", "all -inf", "at least one finite logit", "nothing to normalise")
    return row


def parse_logits(text: str) -> tuple[float, ...]:
    """'10, 10.01, 3' (commas and/or spaces; '-inf' allowed) → checked logits. Raises ConfigError."""
    tokens = [t for t in re.split(r"[,\s;]+", text.strip()) if t]
    row = []
    for t in tokens:
        try:
            row.append(float(t))
        except ValueError:
            raise ConfigError("logits", t, "comma-separated numbers", "not a number") from None
    return check_logits(row)


@dataclass(frozen=True)
class LogitGenerator:
    """A synthetic score row: (center + spread·z, plus `peak` on the middle entry) × scale; z ~ N(0,1)."""

    length: int = 16
    spread: float = 1.0
    peak: float = 0.0
    scale: float = 1.0
    center: float = 0.0
    seed: int = 0

    def logits(self) -> tuple[float, ...]:
        """The row (length,), checked by `check_logits`. Raises ConfigError for out-of-limit settings."""
        if not 1 <= self.length <= LIMITS.max_len:
            raise ConfigError("length", self.length, (1, LIMITS.max_len), "out of range")
        for name in ("spread", "peak", "scale", "center"):
            if not math.isfinite(getattr(self, name)):
                raise ConfigError(name, getattr(self, name), "finite", "must be finite")
        if self.spread < 0:
            raise ConfigError("spread", self.spread, ">= 0", "must not be negative")
        if self.scale <= 0:
            raise ConfigError("scale", self.scale, "> 0", "must be positive")
        g = torch.Generator().manual_seed(self.seed)
        z = torch.randn(self.length, generator=g, dtype=torch.float64)  # (length,)
        x = self.center + self.spread * z
        x[self.length // 2] += self.peak
        return check_logits((x * self.scale).tolist())


@dataclass(frozen=True)
class Scenario:
    """A named preset row from one source: `values`, `generator`, or `from_trace` (the caller brings the row).

    `grow_until_overflow`: double the generator's scale until the naive softmax in that format gives inf/nan.
    """

    name: str
    values: tuple[float, ...] = ()
    generator: LogitGenerator | None = None
    grow_until_overflow: str | None = None
    from_trace: bool = False


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("large", generator=LogitGenerator(length=8, spread=1.0), grow_until_overflow="float16"),
    Scenario("close", values=(10.0, 10.01, 3.0)),
    Scenario("peak", generator=LogitGenerator(length=16, spread=1.0, peak=20.0)),
    Scenario("flat", generator=LogitGenerator(length=64, spread=0.02, center=4.0)),
    Scenario("long", generator=LogitGenerator(length=4096, spread=3.0)),
    Scenario("trace", from_trace=True),
)
SCENARIO_NAMES = tuple(s.name for s in SCENARIOS)


def scenario(name: str) -> Scenario:
    for s in SCENARIOS:
        if s.name == name:
            return s
    raise ConfigError("scenario", name, SCENARIO_NAMES, "unknown scenario")


def scenario_logits(name: str) -> tuple[float, ...]:
    """The row of a preset that does not need a trace (see `score_row` for "trace"). Raises ConfigError."""
    s = scenario(name)
    if s.from_trace:
        raise ConfigError("scenario", name, "a traced attention run", "needs a score row: use score_row()")
    if s.generator is None:
        return check_logits(s.values)
    gen = s.generator
    if s.grow_until_overflow is None:
        return gen.logits()
    fmt = parse_format(s.grow_until_overflow)
    row = gen.logits()
    while max(row) * 2 <= LIMITS.max_abs_logit:
        if _nonfinite(_probs(round_to(torch.tensor([row], dtype=torch.float64), fmt), "naive")):
            break
        gen = replace(gen, scale=gen.scale * 2)
        row = gen.logits()
    return row


@dataclass(frozen=True)
class ScoreRow:
    values: tuple[float, ...]  # one row of the traced attention scores (masked entries are −inf)
    dtype: str  # dtype the scores were computed in
    head: int
    row: int
    full_length: int  # columns of the real scores; > len(values) when the trace kept a cropped sample


def _scores(trace: Trace):
    if "scores" not in trace.landmarks:
        raise ConfigError("scores", "missing", "attention='manual'", "fused attention has no score tensor")
    return trace.events[trace.landmarks["scores"]].outputs[0]


def score_sample_shape(trace: Trace) -> tuple[int, int, int]:
    """(heads, rows, columns) kept of the "scores" landmark. Raises ConfigError when the trace has no scores
    (fused sdpa attention never builds them)."""
    m, r, c = _scores(trace).sample.shape
    return m, r, c


def score_row(trace: Trace, head: int, row: int) -> ScoreRow:
    """Row `row` of head `head` of the "scores" landmark (pre-softmax, mask applied) of a traced run.

    Negative `row` counts from the end. Raises ConfigError when the trace has no scores (fused sdpa attention)
    or the head/row is not in the kept sample.
    """
    out = _scores(trace)
    m, r, _ = out.sample.shape  # (m, r, c): m heads, r query rows, c key columns (cropped)
    if not 0 <= head < m:
        raise ConfigError("head", head, (0, m - 1), "out of range")
    if not -r <= row < r:
        raise ConfigError("row", row, (0, r - 1), "out of range")
    row = row % r
    return ScoreRow(check_logits(out.sample[head, row].tolist()), out.dtype, head, row, out.shape[-1])


# ── the recipes and their metrics ───────────────────────────────────────────────────────────────────────────
def _probs(x: torch.Tensor, method: str) -> torch.Tensor:
    """Softmax over the last dim of x (S, n) with one recipe, in x's dtype (upcast: float32 output)."""
    if method == "naive":
        e = torch.exp(x)
        return e / e.sum(dim=-1, keepdim=True)
    if method == "stable":
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)
    if method == "torch":
        return torch.softmax(x, dim=-1)
    if method == "upcast":
        return torch.softmax(x, dim=-1, dtype=torch.float32)
    raise ConfigError("method", method, METHODS, "unknown method")


def _nonfinite(p: torch.Tensor) -> bool:
    return not bool(torch.isfinite(p).all())


def _reference(logits: torch.Tensor) -> torch.Tensor:
    """float64 softmax over the last dim (stable recipe): the truth every variant is measured against."""
    return torch.softmax(logits.to(torch.float64), dim=-1)


@dataclass(frozen=True)
class RowMetrics:
    """How one softmax output row compares with the float64 row."""

    nan: int
    inf: int
    underflow: int  # probabilities that are exactly 0 here but > 0 in float64
    sum_error: float  # |Σp − 1|, summed in float64 from the stored outputs; nan if any output is nan/inf
    max_abs_error: float  # max |p − ref|; nan if any output is nan/inf
    max_rel_error: float  # max |p − ref| / ref over entries with ref > 0; nan if any output is nan/inf
    kl: float  # KL(ref ‖ p) = Σ ref·ln(ref/p); inf when a ref > 0 probability became 0; nan if non-finite
    argmax_changed: bool  # torch.argmax (first index of the max) differs from float64's
    order_lost: int  # neighbouring pairs in float64's order, strictly ordered there but no longer here


def _row_metrics(p: torch.Tensor, ref: torch.Tensor) -> list[RowMetrics]:
    """Metrics of each row of p (S, n) against ref (S, n) float64."""
    p = p.detach().to(torch.float64)
    nan, inf = torch.isnan(p).sum(-1), torch.isinf(p).sum(-1)
    bad = (nan + inf) > 0  # (S,)
    pos = ref > 0
    underflow = ((p == 0) & pos).sum(-1)
    err = (p - ref).abs()
    rel = torch.where(pos, err / torch.where(pos, ref, 1.0), 0.0)
    terms = torch.where(pos, ref * (torch.log(torch.where(pos, ref, 1.0)) - torch.log(p)), 0.0)
    kl = terms.sum(-1)
    order = torch.argsort(ref, dim=-1, descending=True, stable=True)
    r_sorted, p_sorted = ref.gather(-1, order), p.gather(-1, order)
    order_lost = ((r_sorted[:, :-1] > r_sorted[:, 1:]) & ~(p_sorted[:, :-1] > p_sorted[:, 1:])).sum(-1)
    argmax_changed = (p.nan_to_num(nan=-1.0).argmax(-1) != ref.argmax(-1)) | bad
    rows = []
    for i in range(p.shape[0]):
        undefined = bool(bad[i])
        rows.append(
            RowMetrics(
                nan=int(nan[i]),
                inf=int(inf[i]),
                underflow=int(underflow[i]),
                sum_error=math.nan if undefined else abs(p[i].sum().item() - 1.0),
                max_abs_error=math.nan if undefined else err[i].max().item(),
                max_rel_error=math.nan if undefined else rel[i].max().item(),
                kl=math.nan if undefined else kl[i].item(),
                argmax_changed=bool(argmax_changed[i]),
                order_lost=int(order_lost[i]),
            )
        )
    return rows


@dataclass(frozen=True)
class GradientMetrics:
    """d loss / d logits of one variant against the float64 gradient."""

    values: tuple[float, ...]  # (n,) the gradient as computed (in the format's arithmetic dtype)
    nan: int
    inf: int
    underflow: int  # exactly 0 here, non-zero in float64
    max_abs_error: float  # nan if any entry is nan/inf
    max_rel_error: float  # normwise: max |g − ref| / max |ref|; nan if any entry is nan/inf


def _loss(p: torch.Tensor, loss: str, target: int) -> torch.Tensor:
    """Scalar loss of probs p (1, n), computed in p's dtype."""
    if loss == "dot":
        g = torch.Generator().manual_seed(_VALUE_SEED)
        v = torch.randn(p.shape[-1], generator=g, dtype=torch.float64).to(p.dtype)  # one value column (n,)
        return (p[0] * v).sum()
    if loss == "nll":
        return -torch.log(p[0, target])
    raise ConfigError("loss", loss, LOSSES, "unknown loss")


def _gradient(x: torch.Tensor, method: str, loss: str, target: int) -> torch.Tensor:
    x = x.detach().clone().requires_grad_(True)  # (1, n) leaf in the arithmetic dtype
    _loss(_probs(x, method), loss, target).backward()
    return x.grad[0]  # (n,)


def _gradient_metrics(g: torch.Tensor, ref: torch.Tensor) -> GradientMetrics:
    g64 = g.to(torch.float64)
    nan, inf = int(torch.isnan(g64).sum()), int(torch.isinf(g64).sum())
    err = (g64 - ref).abs().max().item() if g64.numel() else 0.0
    scale = ref.abs().max().item()
    bad = nan + inf > 0
    return GradientMetrics(
        values=tuple(g64.tolist()),
        nan=nan,
        inf=inf,
        underflow=int(((g64 == 0) & (ref != 0)).sum()),
        max_abs_error=math.nan if bad else err,
        max_rel_error=math.nan if bad else (err / scale if scale > 0 else (0.0 if err == 0 else math.inf)),
    )


@dataclass(frozen=True)
class VariantResult:
    format: str  # where the logits were stored: "float16"
    method: str  # "naive" | "stable" | "torch" | "upcast"
    compute_dtype: str  # where the arithmetic ran
    output_dtype: str  # dtype of the probabilities (upcast: float32)
    stored_logits: tuple[float, ...]  # (n,) the logits after rounding to the format
    probs: tuple[float, ...]  # (n,) the output, exactly (every format's values are float64-representable)
    metrics: RowMetrics
    grad: GradientMetrics


@dataclass(frozen=True)
class Comparison:
    logits: tuple[float, ...]  # (n,) as given
    loss: str
    reference: tuple[float, ...]  # (n,) float64 probabilities
    reference_grad: tuple[float, ...]  # (n,) float64 d loss / d logits
    variants: tuple[VariantResult, ...]  # formats × methods, formats outer
    thresholds: tuple[ExpThresholds, ...]  # one per arithmetic dtype used

    def variant(self, fmt: str, method: str) -> VariantResult:
        fmt = FORMAT_ALIASES.get(fmt, fmt)
        return next(v for v in self.variants if v.format == fmt and v.method == method)


def compare(
    logits, formats: tuple[str, ...] = FORMAT_NAMES, methods: tuple[str, ...] = METHODS, loss: str = "dot"
) -> Comparison:
    """Every method in every format on one row of logits, forward and backward, against float64.

    Raises ConfigError for unusable logits, unknown formats/methods/losses.
    """
    row = check_logits(logits)
    fmts = [parse_format(f) for f in formats]
    for m in methods:
        if m not in METHODS:
            raise ConfigError("method", m, METHODS, "unknown method")
    if loss not in LOSSES:
        raise ConfigError("loss", loss, LOSSES, "unknown loss")
    x64 = torch.tensor([row], dtype=torch.float64)  # (1, n)
    ref = _reference(x64)
    target = int(ref[0].argmax())
    ref_grad = _gradient(x64, "stable", loss, target)
    variants = []
    for fmt in fmts:
        x = round_to(x64, fmt)  # (1, n)
        stored = tuple(x[0].to(torch.float64).tolist())
        for method in methods:
            p = _probs(x, method)
            variants.append(
                VariantResult(
                    format=fmt.name,
                    method=method,
                    compute_dtype=dtype_name(fmt.compute),
                    output_dtype=dtype_name(p.dtype),
                    stored_logits=stored,
                    probs=tuple(p[0].to(torch.float64).tolist()),
                    metrics=_row_metrics(p, ref)[0],
                    grad=_gradient_metrics(_gradient(x, method, loss, target), ref_grad),
                )
            )
    computes = dict.fromkeys(f.compute for f in fmts)  # in format order, no repeats
    return Comparison(
        logits=row,
        loss=loss,
        reference=tuple(ref[0].tolist()),
        reference_grad=tuple(ref_grad.tolist()),
        variants=tuple(variants),
        thresholds=tuple(exp_thresholds(d) for d in computes),
    )


# ── sweep: the same row scaled from gentle to extreme ───────────────────────────────────────────────────────
@dataclass(frozen=True)
class SweepCurve:
    format: str
    method: str
    max_abs_error: tuple[float, ...]  # per scale; nan where the output had nan/inf
    max_rel_error: tuple[float, ...]
    kl: tuple[float, ...]
    nonfinite: tuple[bool, ...]  # output had nan/inf
    underflow: tuple[int, ...]  # probabilities flushed to 0 (ref > 0)
    first_nonfinite: float | None  # smallest scale with nan/inf output
    first_underflow: float | None  # smallest scale with a probability flushed to 0


@dataclass(frozen=True)
class Sweep:
    """The row rescaled so its largest |logit| runs over `scales`, every format × method at every scale."""

    logits: tuple[float, ...]  # the row as given
    scales: tuple[float, ...]  # (S,) largest |logit| after rescaling, log-spaced
    curves: tuple[SweepCurve, ...]
    overflow_scale: dict[str, float | None]  # arithmetic dtype → scale where max(logit) reaches exp overflow
    thresholds: tuple[ExpThresholds, ...]


def sweep_scales(lo: float = 0.1, hi: float = 1000.0, points_per_decade: int = 20) -> tuple[float, ...]:
    """Log-spaced scales from lo to hi (both included). Raises ConfigError for an empty or too-fine grid."""
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ConfigError("scales", (lo, hi), "0 < lo < hi", "empty range")
    if not 1 <= points_per_decade <= LIMITS.max_points_per_decade:
        limit = (1, LIMITS.max_points_per_decade)
        raise ConfigError("points_per_decade", points_per_decade, limit, "out of range")
    n = max(2, round(math.log10(hi / lo) * points_per_decade) + 1)
    return tuple(torch.logspace(math.log10(lo), math.log10(hi), n, dtype=torch.float64).tolist())


def sweep(
    logits,
    scales: tuple[float, ...] | None = None,
    formats: tuple[str, ...] = FORMAT_NAMES,
    methods: tuple[str, ...] = METHODS,
) -> Sweep:
    """Rescale the row so its largest |logit| is each of `scales` (default `sweep_scales()`); measure all.

    Forward only. Raises ConfigError for unusable logits (or a row that is all zeros: nothing to scale).
    """
    row = check_logits(logits)
    scales = sweep_scales() if scales is None else tuple(float(s) for s in scales)
    x64 = torch.tensor(row, dtype=torch.float64)  # (n,)
    finite = x64[torch.isfinite(x64)]
    peak = finite.abs().max().item()
    if peak == 0:
        raise ConfigError("logits", "all zero", "a non-zero logit", "nothing to scale")
    if max(scales) * (1.0 + 1e-9) > LIMITS.max_abs_logit or min(scales) <= 0:
        raise ConfigError("scales", (min(scales), max(scales)), LIMITS.max_abs_logit, "out of range")
    unit = x64 / peak  # (n,) largest |logit| = 1
    grid = torch.tensor(scales, dtype=torch.float64)[:, None] * unit[None, :]  # (S, n)
    ref = _reference(grid)
    fmts = [parse_format(f) for f in formats]
    curves = []
    for fmt in fmts:
        x = round_to(grid, fmt)
        for method in methods:
            rows = _row_metrics(_probs(x, method), ref)
            bad = tuple(r.nan + r.inf > 0 for r in rows)
            under = tuple(r.underflow for r in rows)
            curves.append(
                SweepCurve(
                    format=fmt.name,
                    method=method,
                    max_abs_error=tuple(r.max_abs_error for r in rows),
                    max_rel_error=tuple(r.max_rel_error for r in rows),
                    kl=tuple(r.kl for r in rows),
                    nonfinite=bad,
                    underflow=under,
                    first_nonfinite=next((s for s, b in zip(scales, bad, strict=True) if b), None),
                    first_underflow=next((s for s, u in zip(scales, under, strict=True) if u), None),
                )
            )
    top = finite.max().item() / peak  # the largest logit, per unit of scale
    computes = dict.fromkeys(f.compute for f in fmts)  # in format order, no repeats
    thresholds = tuple(exp_thresholds(d) for d in computes)
    return Sweep(
        logits=row,
        scales=scales,
        curves=tuple(curves),
        overflow_scale={t.dtype: (t.overflow_from / top if top > 0 else None) for t in thresholds},
        thresholds=thresholds,
    )


# ── exp(x) in each format ───────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class ExpCurve:
    dtype: str
    x: tuple[float, ...]  # the inputs as stored in this dtype
    y: tuple[float, ...]  # torch.exp in this dtype (inf past overflow, 0 past underflow)
    thresholds: ExpThresholds


def exp_curves(
    formats: tuple[str, ...] = ("float32", "float16", "bfloat16"), points: int = 1201
) -> tuple[ExpCurve, ...]:
    """exp(x) in float64 and in each format's arithmetic dtype, over a range showing every format's underflow
    and overflow point (from 5 % beyond the lowest underflow to 5 % beyond the highest overflow).

    Returns (float64 curve, *one ExpCurve per format's arithmetic dtype*).
    """
    if not 2 <= points <= LIMITS.max_len:
        raise ConfigError("points", points, (2, LIMITS.max_len), "out of range")
    dtypes = list(dict.fromkeys(parse_format(f).compute for f in formats))
    th = [exp_thresholds(d) for d in dtypes]
    lo = 1.05 * min(t.underflow_from for t in th)
    hi = 1.05 * max(t.overflow_from for t in th)
    grid = torch.linspace(lo, hi, points, dtype=torch.float64)  # (points,)
    xs = tuple(grid.tolist())
    curves = [ExpCurve("float64", xs, tuple(grid.exp().tolist()), exp_thresholds(torch.float64))]
    for d, t in zip(dtypes, th, strict=True):
        x = grid.to(d)
        curves.append(ExpCurve(t.dtype, tuple(x.double().tolist()), tuple(x.exp().double().tolist()), t))
    return tuple(curves)


# ── two close logits ────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class CloseLogits:
    """Two logits stored in one format: do they stay apart, and what softmax([a, b]) gives there."""

    format: str
    spacing: float  # the format's gap at max(|a|, |b|): logits closer than this can merge
    stored: tuple[float, float]
    distinct: bool
    probs: tuple[float, float]  # torch.softmax of the stored pair in the format's arithmetic dtype
    reference: tuple[float, float]  # float64 softmax of the pair as given


def close_logits(a: float, b: float, formats: tuple[str, ...] = FORMAT_NAMES) -> tuple[CloseLogits, ...]:
    """For each format: spacing at the pair's magnitude, the stored pair, whether it is still two values."""
    pair = check_logits((a, b))
    if not all(math.isfinite(v) for v in pair):
        raise ConfigError("logits", pair, "finite", "both logits must be finite")
    x64 = torch.tensor([pair], dtype=torch.float64)  # (1, 2)
    ref = tuple(_reference(x64)[0].tolist())
    out = []
    for f in formats:
        fmt = parse_format(f)
        x = round_to(x64, fmt)
        s0, s1 = x[0].to(torch.float64).tolist()
        p0, p1 = torch.softmax(x, dim=-1)[0].to(torch.float64).tolist()
        gap = spacing(fmt.storage, max(abs(a), abs(b)))
        out.append(CloseLogits(fmt.name, gap, (s0, s1), s0 != s1, (p0, p1), ref))
    return tuple(out)


# ── 8-bit probabilities for inference ───────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class QuantizedProbs:
    """Probabilities stored in 8-bit codes and decoded back, against the float64 probabilities.

    linear: code = round(p·255), p' = code/255 (uniform steps of 1/255).
    log2: code = round(−log2(p)·2^f) for codes 0..254 (f fractional bits), p' = 2^(−code/2^f); code 255 = 0.
    """

    scheme: str  # "linear" | "log2"
    step: float  # one code step: in p (linear) or in −log2 p (log2)
    smallest_nonzero: float  # the smallest positive value the codes can hold
    values: tuple[float, ...]  # (n,) decoded probabilities
    metrics: RowMetrics


def quantize_probs(probs, log2_fraction_bits: int = 3) -> tuple[QuantizedProbs, QuantizedProbs]:
    """The float64 probabilities `probs` (n,) quantised linearly and in log2, and the error of each."""
    if not 0 <= log2_fraction_bits <= 7:
        raise ConfigError("log2_fraction_bits", log2_fraction_bits, (0, 7), "out of range")
    p = torch.tensor([list(probs)], dtype=torch.float64)  # (1, n)
    levels = 2**8 - 1
    linear = torch.round(p * levels) / levels
    steps = 2.0**log2_fraction_bits
    code = torch.round(-torch.log2(p) * steps)  # +inf for p = 0
    log2 = torch.where(code <= levels - 1, torch.exp2(-code.clamp(max=levels - 1) / steps), 0.0)
    lin_step, log2_floor = 1 / levels, 2.0 ** (-(levels - 1) / steps)
    return (
        QuantizedProbs("linear", lin_step, lin_step, tuple(linear[0].tolist()), _row_metrics(linear, p)[0]),
        QuantizedProbs("log2", 1 / steps, log2_floor, tuple(log2[0].tolist()), _row_metrics(log2, p)[0]),
    )
