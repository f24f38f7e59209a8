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
from collections.abc import Iterable
from dataclasses import dataclass, replace

import torch

from mpviz.float_edges import ExpThresholds, exp_thresholds, spacing, torch_cast_bin
from mpviz.formats import ALIASES, SHORT_NAMES, RoundingBin, canonical_format_name
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
_VALUE_SEED = 0  # seed of the fixed value column v of the "dot" loss


@dataclass(frozen=True)
class SoftmaxLimits:
    max_len: int = 8192  # logits per row
    max_abs_logit: float = 1e6  # finite logits only; −inf (a masked entry) is allowed
    max_points_per_decade: int = 50  # sweep resolution
    heavy_len: int = 256  # longer rows are heavy work for a shared server (a sweep of 1024 logits takes seconds)

    def is_heavy(self, n: int) -> bool:
        """Whether a comparison or sweep of an n-logit row should wait for a slot of the admission gate."""
        return n > self.heavy_len


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


# ── input: logits, generators, scenarios ────────────────────────────────────────────────────────────────────
def check_logits(values: Iterable[float]) -> tuple[float, ...]:
    """`values` as a tuple of floats if it is a usable row, else ConfigError("logits", …).

    Usable: 1..LIMITS.max_len entries, no NaN or +inf, |x| ≤ LIMITS.max_abs_logit, at least one finite entry
    (−inf is allowed: it is how attention masks an entry).
    """
    row = tuple(float(v) for v in values)
    if not 1 <= len(row) <= LIMITS.max_len:
        raise ConfigError("logits", len(row), (1, LIMITS.max_len), "wrong number of logits")
    for v in row:
        if math.isnan(v) or v == math.inf:
            raise ConfigError("logits", v, "finite or -inf", "not a usable logit")
        if math.isfinite(v) and abs(v) > LIMITS.max_abs_logit:
            raise ConfigError("logits", v, LIMITS.max_abs_logit, "logit too large")
    if not any(math.isfinite(v) for v in row):
        raise ConfigError("logits", -math.inf, "at least one finite logit", "nothing to normalise")
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
        if _nonfinite(recipe_probs(round_to(torch.tensor([row], dtype=torch.float64), fmt), "naive")):
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
def recipe_probs(x: torch.Tensor, method: str) -> torch.Tensor:
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


def reference_probs(logits: torch.Tensor) -> torch.Tensor:
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
    kl: float  # KL(ref ‖ p/Σp) ≥ 0; inf when a ref > 0 probability became 0; nan if non-finite (see row_metrics)
    argmax_changed: bool  # torch.argmax (first index of the max) differs from float64's
    order_lost: int  # neighbouring pairs in float64's order, strictly ordered there but no longer here


def row_metrics(p: torch.Tensor, ref: torch.Tensor) -> list[RowMetrics]:
    """Metrics of each row of p (S, n) against ref (S, n) float64."""
    p = p.detach().to(torch.float64)
    nan, inf = torch.isnan(p).sum(-1), torch.isinf(p).sum(-1)
    bad = (nan + inf) > 0  # (S,)
    pos = ref > 0
    underflow = ((p == 0) & pos).sum(-1)
    err = (p - ref).abs()
    rel = torch.where(pos, err / torch.where(pos, ref, 1.0), 0.0)
    # KL of the output renormalised (its sum error is a metric of its own), summed as ref·(q − 1 − ln q) with
    # q = p̂/ref: every term is ≥ 0 (ln q ≤ q − 1), so rounding cannot show up as a negative divergence the way
    # Σ ref·ln(ref/p) does; the clamp only absorbs expm1's last-ulp error where q ≈ 1.
    total = p.sum(-1, keepdim=True)  # (S, 1)
    log_q = torch.log(p / total) - torch.log(torch.where(pos, ref, 1.0))
    terms = torch.where(pos, ref * (torch.expm1(log_q) - log_q).clamp(min=0.0), 0.0)
    kl = torch.where(total[:, 0] > 0, terms.sum(-1), math.inf)  # nothing left at all: every ref > 0 entry lost
    order = torch.argsort(ref, dim=-1, descending=True, stable=True)
    r_sorted, p_sorted = ref.gather(-1, order), p.gather(-1, order)
    order_lost = ((r_sorted[:, :-1] > r_sorted[:, 1:]) & ~(p_sorted[:, :-1] > p_sorted[:, 1:])).sum(-1)
    argmax_changed = (p.nan_to_num(nan=-1.0).argmax(-1) != ref.argmax(-1)) | bad
    undefined = torch.where(bad, math.nan, 0.0)  # + this: nan where the output held nan/inf
    columns = zip(  # one .tolist() per metric, not one .item() per row: a sweep has ~60 rows × 12 variants
        nan.tolist(),
        inf.tolist(),
        underflow.tolist(),
        ((total[:, 0] - 1.0).abs() + undefined).tolist(),
        (err.amax(-1) + undefined).tolist(),
        (rel.amax(-1) + undefined).tolist(),
        (kl + undefined).tolist(),
        argmax_changed.tolist(),
        order_lost.tolist(),
        strict=True,
    )
    return [RowMetrics(*column) for column in columns]


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
    _loss(recipe_probs(x, method), loss, target).backward()
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

    def summary(self) -> ComparisonSummary:
        """Which variants broke, flushed or reordered, and where max-subtracting rescued a broken naive one."""
        broken = tuple(v for v in self.variants if v.metrics.nan + v.metrics.inf > 0)
        rescued = []
        for fmt in dict.fromkeys(v.format for v in self.variants):
            mine = {v.method: v for v in self.variants if v.format == fmt}
            if "naive" in mine and "stable" in mine and mine["naive"] in broken and mine["stable"] not in broken:
                rescued.append(mine["stable"])
        return ComparisonSummary(
            broken=broken,
            flushed=tuple(v for v in self.variants if v.metrics.underflow),
            argmax_moved=tuple(v for v in self.variants if v.metrics.argmax_changed),
            rescued_by_max_subtraction=tuple(rescued),
        )


@dataclass(frozen=True)
class ComparisonSummary:
    """The variants of a `Comparison` a reader should hear about, in the comparison's order."""

    broken: tuple[VariantResult, ...]  # output holds nan or inf
    flushed: tuple[VariantResult, ...]  # some probability > 0 in float64 is exactly 0 here
    argmax_moved: tuple[VariantResult, ...]  # the most probable entry is another one than float64's
    rescued_by_max_subtraction: tuple[VariantResult, ...]  # the stable variant of a format whose naive one broke


def compare(
    logits: Iterable[float],
    formats: tuple[str, ...] = FORMAT_NAMES,
    methods: tuple[str, ...] = METHODS,
    loss: str = "dot",
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
    ref = reference_probs(x64)
    target = int(ref[0].argmax())
    ref_grad = _gradient(x64, "stable", loss, target)
    variants = []
    for fmt in fmts:
        x = round_to(x64, fmt)  # (1, n)
        stored = tuple(x[0].to(torch.float64).tolist())
        for method in methods:
            p = recipe_probs(x, method)
            variants.append(
                VariantResult(
                    format=fmt.name,
                    method=method,
                    compute_dtype=dtype_name(fmt.compute),
                    output_dtype=dtype_name(p.dtype),
                    stored_logits=stored,
                    probs=tuple(p[0].to(torch.float64).tolist()),
                    metrics=row_metrics(p, ref)[0],
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


# ── two close logits ────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class CloseLogits:
    """Two logits stored in one format: do they stay apart, and what softmax([a, b]) gives there.

    They merge exactly when they fall in the same rounding bin; the spacing only says how wide bins are.
    """

    format: str
    spacing: float  # the format's gap at max(|a|, |b|): how wide a rounding bin is there
    stored: tuple[float, float]
    distinct: bool  # stored as two values, i.e. a and b lie in different bins
    probs: tuple[float, float]  # torch.softmax of the stored pair in the format's arithmetic dtype
    reference: tuple[float, float]  # float64 softmax of the pair as given
    bins: tuple[RoundingBin, RoundingBin]  # the rounding bin a and b each fall in


def close_logits(a: float, b: float, formats: tuple[str, ...] = FORMAT_NAMES) -> tuple[CloseLogits, ...]:
    """For each format: spacing at the pair's magnitude, the stored pair, each value's bin, still two values?"""
    pair = check_logits((a, b))
    if not all(math.isfinite(v) for v in pair):
        raise ConfigError("logits", pair, "finite", "both logits must be finite")
    x64 = torch.tensor([pair], dtype=torch.float64)  # (1, 2)
    ref = tuple(reference_probs(x64)[0].tolist())
    out = []
    for f in formats:
        fmt = parse_format(f)
        x = round_to(x64, fmt)
        s0, s1 = x[0].to(torch.float64).tolist()
        p0, p1 = torch.softmax(x, dim=-1)[0].to(torch.float64).tolist()
        gap = spacing(fmt.storage, max(abs(a), abs(b)))
        bins = (torch_cast_bin(pair[0], fmt.storage), torch_cast_bin(pair[1], fmt.storage))
        out.append(CloseLogits(fmt.name, gap, (s0, s1), s0 != s1, (p0, p1), ref, bins))
    return tuple(out)


@dataclass(frozen=True)
class GapCounterexamples:
    """Two pairs near one magnitude, measured in one format, that show the gap alone does not decide.

    `kept` are closer than the spacing yet stored as two values (a bin edge lies between them); `merged` are a
    full spacing apart yet stored as one value (the two midpoints around an even stored value both round to it).
    """

    format: str
    spacing: float  # at the magnitude asked about
    kept: tuple[float, float]
    kept_stored: tuple[float, float]
    merged: tuple[float, float]
    merged_stored: float

    @property
    def kept_gap(self) -> float:
        return self.kept[1] - self.kept[0]

    @property
    def merged_gap(self) -> float:
        return self.merged[1] - self.merged[0]


def gap_counterexamples(x: float, fmt: str) -> GapCounterexamples | None:
    """Counterexamples near |x| in `fmt`, each checked with torch's own cast; None where the format's values
    run out there (|x| rounds to inf or saturates)."""
    f = parse_format(fmt)
    here = torch_cast_bin(abs(x), f.storage)
    step = spacing(f.storage, abs(x))
    if not all(math.isfinite(v) for v in (here.stored, here.lo, here.hi, step)) or step <= 0:
        return None

    def cast(v: float) -> float:
        return round_to(torch.tensor([v], dtype=torch.float64), f)[0].item()

    # kept: a round decimal gap of about a tenth of the spacing, straddling the bin's upper edge
    gap = 10.0 ** math.floor(math.log10(step / 10))
    digits = max(0, -math.floor(math.log10(gap)))
    a = round(math.floor(here.hi / gap) * gap, digits)
    kept = (a, round(a + gap, digits))
    kept_stored = (cast(kept[0]), cast(kept[1]))
    # merged: the midpoints around the first even stored value from here up (an odd one keeps neither)
    centre = here.stored
    for _ in range(4):
        width = spacing(f.storage, centre)
        pair = (centre - width / 2, centre + width / 2)
        if cast(pair[0]) == cast(pair[1]) == centre:
            if kept_stored[0] == kept_stored[1]:
                return None
            return GapCounterexamples(f.name, step, kept, kept_stored, pair, centre)
        centre = cast(centre + width)
    return None


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


def quantize_probs(probs: Iterable[float], log2_fraction_bits: int = 3) -> tuple[QuantizedProbs, QuantizedProbs]:
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
        QuantizedProbs("linear", lin_step, lin_step, tuple(linear[0].tolist()), row_metrics(linear, p)[0]),
        QuantizedProbs("log2", 1 / steps, log2_floor, tuple(log2[0].tolist()), row_metrics(log2, p)[0]),
    )
