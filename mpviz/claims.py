"""Claims the tutorials make about mixed precision, each checked against measurements from this machine's torch.

A claim is data (`Claim`): an id, a short key, the seed tutorial files it is drawn from (names in
shared/seeds/, the first is where it is stated most directly), the check function that measures it, and
whether that check is slow (it trains or times something: views run it on demand). A check returns `Checked`:
a verdict code, per-device verdict codes where the devices were measured one by one, the evidence (a frozen
dataclass of measurements) and a few key measurements by name. Nothing here is a sentence: views word each
claim and verdict and fill the wording from the evidence fields.

Devices: "cpu" is CPU autocast on this machine. "cuda" is CUDA's autocast policy: functions are probed on fake
CUDA tensors through torch's real AutocastCUDA kernels (`mpviz.policy.probe_call`), and the attention block's
tensors come from a real GPU when there is one, else from the "cuda-sim" emulation (CUDA's policy applied to
CPU tensors). Every policy claim is checked under bf16 autocast, the setting the tutorials use.

Verdict codes (VERDICTS): holds | partly_holds | depends_on_device | does_not_hold | inconclusive (a timing whose
spread is too wide to decide, or whose verdict changes between the quartiles: no verdict is given).

Sources: each claim cites seed files by name; `SOURCES` gives each file's title (Chinese as in the source, and
an English gloss) and `Claim.section` where in its first seed the claim is made. Views pick the language.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache

import torch

from mpviz.attention import AttentionTrace, available_devices, trace_attention
from mpviz.formats import Encoding, FormatSpec, encode, resolve_format, round_array
from mpviz.isolation import autocast_shared
from mpviz.model import AttentionConfig, ConfigError, build, parse_autocast_dtype
from mpviz.policy import CallProbe, device_policy, probe_call
from mpviz.scaler import RecipeResult, ScalerSettings, TrainConfig, compare_recipes
from mpviz.softmax import CloseLogits, close_logits
from mpviz.stats import FormatRange, dtype_name
from mpviz.timing import Spread, ratios, time_interleaved

VERDICTS = ("holds", "partly_holds", "depends_on_device", "does_not_hold", "inconclusive")
DEVICES = ("cpu", "cuda")  # "cuda": CUDA's autocast policy (probed; values emulated on CPU without a GPU)
AUTOCAST_DTYPE = "bfloat16"  # the tutorials' setting: every policy claim is checked under bf16 autocast
BLOCK = AttentionConfig()  # the attention block traced for landmark dtypes (manual attention: probs exist)


# ── results ─────────────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Checked:
    """One claim, measured."""

    claim: int
    verdict: str  # one of VERDICTS
    device_verdicts: dict[str, str]  # device → verdict where the devices were checked one by one; {} otherwise
    evidence: object  # the check's evidence dataclass (see each check)
    headline: dict[str, object]  # a few key measurements by name, for tables and the CLI


def _all_some_none(flags: list[bool]) -> str:
    """holds when every part of a claim was measured true, partly_holds when some, does_not_hold when none."""
    return "holds" if all(flags) else ("partly_holds" if any(flags) else "does_not_hold")


def _combine(device_verdicts: dict[str, str]) -> str:
    """The devices' common verdict, or depends_on_device when they differ."""
    found = set(device_verdicts.values())
    return found.pop() if len(found) == 1 else "depends_on_device"


# ── what autocast does on each device (claims 1, 2, 3, 7) ───────────────────────────────────────────────────
def trace_device(device: str) -> str:
    """Where `device`'s attention block runs: "cpu"; for "cuda" a real GPU if present, else "cuda-sim"."""
    if device == "cpu":
        return "cpu"
    return "cuda" if "cuda" in available_devices() else "cuda-sim"


@lru_cache(maxsize=len(DEVICES))
def block_trace(device: str) -> AttentionTrace:
    """The attention block (`BLOCK`) traced forward and backward under bf16 autocast on `device`; cached."""
    return trace_attention(BLOCK, trace_device(device), AUTOCAST_DTYPE)


@dataclass(frozen=True)
class DeviceRun:
    """What one device's autocast did with the ops a claim is about."""

    device: str  # "cpu" | "cuda"
    trace_device: str  # where the attention block ran: "cpu", "cuda-sim" (emulated on CPU) or "cuda"
    categories: dict[str, str | None]  # op → category in the device's probed policy; None = not in the policy
    probes: tuple[CallProbe, ...]  # each probed function under autocast (CUDA: fake tensors, real kernels)
    landmarks: dict[str, str]  # attention-block landmark → the dtype it came out in
    low_precision_ops: tuple[str, ...]  # the probes' computing ops (no casts, no views) that output bf16
    op_dtypes: dict[str, tuple[str, ...]]  # each computing op of the probes → the dtypes of its outputs


@dataclass(frozen=True)
class PolicyEvidence:
    autocast_dtype: str
    devices: tuple[DeviceRun, ...]  # in DEVICES order

    def on(self, device: str) -> DeviceRun:
        return next(r for r in self.devices if r.device == device)


def _is_view(op: str) -> bool:
    """Whether the ATen op named like "aten.t.default" returns an alias of its input (a view, detach)."""
    ns, name, overload = op.split(".")
    schema = getattr(getattr(getattr(torch.ops, ns), name), overload)._schema
    return any(r.alias_info is not None for r in schema.returns)


def _device_run(
    device: str, functions: tuple[tuple[str, tuple[str, ...]], ...], ops: tuple[str, ...], landmarks: tuple[str, ...]
) -> DeviceRun:
    policy = device_policy(device)
    probes = tuple(probe_call(fn, dtypes, device, AUTOCAST_DTYPE) for fn, dtypes in functions)
    trace = block_trace(device).trace
    computing = [s for p in probes for s in p.steps if not s.is_cast and not _is_view(s.op)]
    low = tuple(dict.fromkeys(s.op for s in computing if AUTOCAST_DTYPE in s.outputs))
    return DeviceRun(
        device=device,
        trace_device=trace_device(device),
        categories={op: policy.category_of(op) for op in ops},
        probes=probes,
        landmarks={name: trace.landmark_event(name).outputs[0].dtype for name in landmarks},
        low_precision_ops=low,
        op_dtypes={s.op: s.outputs for s in computing},
    )


def _policy_claim(
    claim_id: int,
    functions: tuple[tuple[str, tuple[str, ...]], ...],
    ops: tuple[str, ...],
    landmarks: tuple[str, ...],
    parts: Callable[[DeviceRun], list[bool]],
) -> Checked:
    """Run the probes on every device; a device's verdict counts which of `parts(run)` were measured true."""
    runs = tuple(_device_run(d, functions, ops, landmarks) for d in DEVICES)
    device_verdicts = {r.device: _all_some_none(parts(r)) for r in runs}
    headline: dict[str, object] = {}
    for r in runs:
        headline |= {f"{r.device}_{p.function}_out": p.output_dtype for p in r.probes}
        headline |= {f"{r.device}_{name}": dtype for name, dtype in r.landmarks.items()}
    evidence = PolicyEvidence(AUTOCAST_DTYPE, runs)
    return Checked(claim_id, _combine(device_verdicts), device_verdicts, evidence, headline)


def check_softmax_fp32() -> Checked:
    """Claim: autocast computes softmax in float32. Parts: softmax of a bf16 input returns float32; the
    attention block's probs come out float32."""
    return _policy_claim(
        1,
        (("softmax", (AUTOCAST_DTYPE,)),),
        ("aten::softmax.int",),
        ("scores", "probs"),
        lambda r: [r.probes[0].output_dtype == "float32", r.landmarks["probs"] == "float32"],
    )


def check_matmul_low_precision() -> Checked:
    """Claim: matmul and linear run in low precision under autocast. Parts: each probe with float32 inputs
    returns bf16; each matmul-made landmark of the block is bf16."""
    return _policy_claim(
        2,
        (("matmul", ("float32", "float32")), ("linear", ("float32", "float32", "float32"))),
        ("aten::matmul", "aten::linear"),
        ("q", "scores", "context", "logits"),
        lambda r: (
            [p.output_dtype == AUTOCAST_DTYPE for p in r.probes] + [d == AUTOCAST_DTYPE for d in r.landmarks.values()]
        ),
    )


def check_layer_norm_fp32() -> Checked:
    """Claim: autocast keeps LayerNorm in float32. Part: layer_norm of a bf16 input (what a bf16 linear hands
    on) returns float32. The block's x_norm is shown, not judged: its input x is float32 on both devices."""
    return _policy_claim(
        3,
        (("layer_norm", (AUTOCAST_DTYPE, "float32", "float32")),),
        ("aten::layer_norm", "aten::native_layer_norm"),
        ("x", "x_norm"),
        lambda r: [r.probes[0].output_dtype == "float32"],
    )


LOG_SOFTMAX_OP = "aten._log_softmax.default"  # cross-entropy's inner step, where the devices differ


def check_loss_fp32() -> Checked:
    """Claim: the loss is computed in float32. Parts: cross-entropy of bf16 logits returns float32; none of its
    computing ops (log_softmax, nll_loss) runs in bf16.

    The headline says exactly where the devices differ: the returned dtype (`<device>_cross_entropy_out`) and
    the dtype the internal `_log_softmax` ran in (`<device>_log_softmax_dtype`, from `DeviceRun.op_dtypes`).
    """
    checked = _policy_claim(
        7,
        (("cross_entropy", (AUTOCAST_DTYPE,)),),
        ("aten::cross_entropy_loss", "aten::log_softmax.int", "aten::nll_loss"),
        ("logits", "loss"),
        lambda r: [r.probes[0].output_dtype == "float32", not r.low_precision_ops],
    )
    for run in checked.evidence.devices:
        checked.headline[f"{run.device}_log_softmax_dtype"] = run.op_dtypes.get(LOG_SOFTMAX_OP, (None,))[0]
    return checked


# ── ranges and stored values (claims 4, 5, 11) ──────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class RangeEvidence:
    bfloat16: FormatSpec
    float32: FormatSpec
    float16: FormatSpec  # for contrast
    same_max: bool
    same_smallest_normal: bool
    same_smallest_subnormal: bool
    same_binades: bool  # same largest and smallest normal exponent
    max_ratio: float  # bf16 max / float32 max
    subnormal_ratio: float  # bf16 smallest subnormal / float32 smallest subnormal


def check_bf16_range() -> Checked:
    """Claim: bf16's dynamic range is exactly float32's. Holds if max, smallest normal and smallest subnormal
    all agree; partly if only the normal exponent range (binades) agrees."""
    bf, f32, f16 = (resolve_format(n) for n in ("bfloat16", "float32", "float16"))
    same = {f: getattr(bf, f) == getattr(f32, f) for f in ("max", "smallest_normal", "smallest_subnormal")}
    binades = bf.emax == f32.emax and bf.emin == f32.emin
    verdict = "holds" if all(same.values()) else ("partly_holds" if binades else "does_not_hold")
    evidence = RangeEvidence(
        bf,
        f32,
        f16,
        same["max"],
        same["smallest_normal"],
        same["smallest_subnormal"],
        binades,
        bf.max / f32.max,
        bf.smallest_subnormal / f32.smallest_subnormal,
    )
    headline = {
        "bf16_max": bf.max,
        "fp32_max": f32.max,
        "bf16_smallest_normal": bf.smallest_normal,
        "bf16_smallest_subnormal": bf.smallest_subnormal,
        "fp32_smallest_subnormal": f32.smallest_subnormal,
    }
    return Checked(4, verdict, {}, evidence, headline)


@dataclass(frozen=True)
class FormatStorage:
    format: FormatSpec
    stored: tuple[Encoding, ...]  # each value of the claim stored in `format` (round to nearest even)
    zero_at_or_below: float  # a non-zero |x| at or below this rounds to 0 in `format`


@dataclass(frozen=True)
class StorageEvidence:
    values: tuple[float, ...]  # the values the claim is about
    claimed: FormatStorage  # in the format the claim is about
    contrast: FormatStorage  # the same values in the other 16-bit format


def _storage(values: tuple[float, ...], fmt: str) -> FormatStorage:
    spec = resolve_format(fmt)
    zero = FormatRange.of(parse_autocast_dtype(fmt)).underflow_at
    return FormatStorage(spec, tuple(encode(v, spec) for v in values), zero)


def _storage_claim(claim_id: int, values: tuple[float, ...], fmt: str, other: str, claims_zero: bool) -> Checked:
    ev = StorageEvidence(values, _storage(values, fmt), _storage(values, other))
    verdict = _all_some_none([e.underflow == claims_zero for e in ev.claimed.stored])
    headline: dict[str, object] = {f"{fmt}({v:g})": e.value for v, e in zip(values, ev.claimed.stored, strict=True)}
    headline[f"{fmt}_zero_at_or_below"] = ev.claimed.zero_at_or_below
    return Checked(claim_id, verdict, {}, ev, headline)


FP16_TINY_VALUES = (1e-5, 1e-7)  # both below the 6.1e-5 a tutorial calls fp16's smallest value
BF16_TINY_VALUES = (1e-7, 1e-8)  # the gradients a tutorial says bf16 holds easily


def check_fp16_tiny_gradients() -> Checked:
    """Claim: in fp16 values below ~6.1e-5, such as a 1e-7 gradient, become zero. Holds per value that
    really is stored as 0."""
    return _storage_claim(5, FP16_TINY_VALUES, "float16", "bfloat16", claims_zero=True)


def check_bf16_tiny_gradients() -> Checked:
    """Claim: bf16 keeps tiny gradients (1e-7, 1e-8) non-zero. Holds per value stored as non-zero."""
    return _storage_claim(11, BF16_TINY_VALUES, "bfloat16", "float16", claims_zero=False)


# ── two close scores (claim 6) ──────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class ScorePair:
    scores: tuple[float, float]
    formats: tuple[CloseLogits, ...]  # float16, bfloat16

    def on(self, fmt: str) -> CloseLogits:
        return next(c for c in self.formats if c.format == fmt)


@dataclass(frozen=True)
class CloseScoresEvidence:
    claimed_value: float  # what the tutorial says both scores become
    pairs: tuple[ScorePair, ...]  # the claim's pair first, then the tutorial's other example


CLAIMED_PAIR, CLAIMED_VALUE, OTHER_PAIR = (10.1, 10.2), 10.125, (10.0, 10.01)


def check_close_scores() -> Checked:
    """Claim: in fp16 the scores 10.1 and 10.2 may both be stored as 10.125 (and softmax cannot tell them apart).
    Holds if fp16 stores both as 10.125; partly if they merge into another value; does not hold if they stay
    distinct."""
    pairs = tuple(ScorePair(p, close_logits(*p, formats=("float16", "bfloat16"))) for p in (CLAIMED_PAIR, OTHER_PAIR))
    fp16 = pairs[0].on("float16")
    if fp16.stored == (CLAIMED_VALUE, CLAIMED_VALUE):
        verdict = "holds"
    else:
        verdict = "does_not_hold" if fp16.distinct else "partly_holds"
    headline = {
        "fp16_stored": fp16.stored,
        "bf16_stored": pairs[0].on("bfloat16").stored,
        "fp16_spacing_at_10": fp16.spacing,
        "bf16_merges_10_and_10.01": not pairs[1].on("bfloat16").distinct,
    }
    return Checked(6, verdict, {}, CloseScoresEvidence(CLAIMED_VALUE, pairs), headline)


# ── training without a GradScaler (claim 8) ─────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class ScalerEvidence:
    config: TrainConfig  # the base run every recipe trained
    recipes: tuple[RecipeResult, ...]  # fp32, bf16, fp16+scaler, fp16

    def recipe(self, name: str) -> RecipeResult:
        return next(r for r in self.recipes if r.recipe == name)


def scaler_check_config() -> TrainConfig:
    """A tiny run (T=8, d=32, 10 steps) with the loss × 2^-16: gradients that small are where fp16 underflows."""
    model = AttentionConfig(seq_len=8, d_model=32, n_heads=2)
    return TrainConfig(model=model, steps=10, loss_multiplier=2.0**-16, scaler=ScalerSettings.defaults("cpu"))


def check_bf16_needs_no_scaler() -> Checked:
    """Claim: bf16 training needs no GradScaler. Holds if bf16 without a scaler never sees inf/NaN and loses no
    more gradient elements to zero than fp16 with a GradScaler; partly if it stays finite but loses more."""
    cfg = scaler_check_config()
    ev = ScalerEvidence(cfg, compare_recipes(cfg))
    bf16, scaled, plain = ev.recipe("bf16"), ev.recipe("fp16+scaler"), ev.recipe("fp16")
    finite = not bf16.nonfinite_steps and bf16.diverged_at is None
    if not finite:
        verdict = "does_not_hold"
    else:
        verdict = "holds" if bf16.mean_zero_grad_fraction <= scaled.mean_zero_grad_fraction else "partly_holds"
    headline = {
        "bf16_lost_to_zero": bf16.mean_zero_grad_fraction,
        "fp16_scaler_lost_to_zero": scaled.mean_zero_grad_fraction,
        "fp16_no_scaler_lost_to_zero": plain.mean_zero_grad_fraction,
        "bf16_nonfinite_steps": len(bf16.nonfinite_steps),
    }
    return Checked(8, verdict, {}, ev, headline)


# ── speed (claim 9) ─────────────────────────────────────────────────────────────────────────────────────────
def measured_device() -> str:
    """The device the timing and accumulation checks run on: a GPU when there is one, else the CPU."""
    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class SpeedRow:
    dtype: str  # "float32" | "bfloat16" | "float16"
    matmul_ms: float  # median of one n×n matmul, both operands stored in `dtype`
    step_ms: float  # median forward+backward of the block under autocast(`dtype`) (float32: autocast off)
    matmul_speedup: float  # median over rounds of float32's time / this time in the same round
    step_speedup: float
    matmul: Spread  # milliseconds, every round
    step: Spread
    matmul_speedup_spread: Spread  # per-round ratios
    step_speedup_spread: Spread


# What a timing on one device can say about the claim, which is about GPUs (tensor cores). Codes for views.
SPEED_SCOPE: dict[str, dict[str, tuple[str, ...]]] = {
    "cpu": {
        "tells": ("speed_on_this_cpu", "cast_overhead_on_this_cpu", "low_precision_kernels_on_this_cpu"),
        "cannot_tell": ("gpu_tensor_core_speedup", "gpu_memory_bandwidth_saving", "speed_at_model_scale"),
    },
    "cuda": {
        "tells": ("speed_on_this_gpu", "cast_overhead_on_this_gpu"),
        "cannot_tell": ("speed_on_other_gpus", "speed_at_model_scale"),
    },
}


@dataclass(frozen=True)
class SpeedEvidence:
    device: str
    threads: int  # torch.get_num_threads() (CPU)
    matmul_n: int
    block: AttentionConfig
    repeat: int  # interleaved timed rounds per number (after one warm-up run of each)
    rows: tuple[SpeedRow, ...]  # float32 first
    cpu_capability: str  # torch.backends.cpu.get_cpu_capability(): the vector ISA torch's CPU kernels use here
    claim_device: str  # the device the claim is about: "cuda" (GPU tensor cores)
    tells: tuple[str, ...]  # SPEED_SCOPE codes: what this measurement can tell about the claim
    cannot_tell: tuple[str, ...]
    max_relative_spread: float  # a step speedup whose IQR / median is wider than this gives no verdict
    verdict_at_q1: str  # the verdict rule applied to every low dtype's lower-quartile step speedup
    verdict_at_q3: str  # … and to the upper quartiles; they differ when the spread straddles a threshold
    too_noisy: bool  # some step speedup's relative spread exceeds max_relative_spread


SPEED_MATMUL_N = 256
SPEED_BLOCK = AttentionConfig(seq_len=256, d_model=256, n_heads=4)  # fp16 on CPU allows no bigger (model.LIMITS)
SPEED_REPEAT = 7  # interleaved rounds: enough for quartiles, short enough to run on demand
MAX_RELATIVE_SPREAD = 0.5  # IQR above half the median: the rounds disagree too much to judge
SPEED_DTYPES = (("float32", None), ("bfloat16", torch.bfloat16), ("float16", torch.float16))


def measure_speed(repeat: int = SPEED_REPEAT) -> SpeedEvidence:
    """Time one matmul and one training step of `SPEED_BLOCK` in float32, bf16 and fp16 on `measured_device()`.

    All six candidates run in each of `repeat` rounds (order rotated); speedups are per-round ratios to the same
    round's float32, so a slow spell of the machine mostly cancels. Raises ConfigError for a bad `repeat`.
    """
    device = measured_device()
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(SPEED_MATMUL_N, SPEED_MATMUL_N, generator=g) for _ in range(2))  # (n, n) each
    model, x, targets = build(SPEED_BLOCK, device=device)
    candidates: dict[str, Callable[[], object]] = {}
    for name, low in SPEED_DTYPES:
        da, db = (t.to(device, low or torch.float32) for t in (a, b))

        def step(low: torch.dtype | None = low) -> None:
            model.zero_grad(set_to_none=True)
            with autocast_shared(), torch.autocast(device, dtype=low) if low else nullcontext():
                loss = model(x, targets)
            loss.backward()

        candidates[f"{name}/matmul"] = lambda da=da, db=db: da @ db
        candidates[f"{name}/step"] = step
    sync = torch.cuda.synchronize if device == "cuda" else None
    t = time_interleaved(candidates, repeat, sync)
    rows = []
    for name, _ in SPEED_DTYPES:
        mm, st = t[f"{name}/matmul"], t[f"{name}/step"]
        mm_up, st_up = ratios(t["float32/matmul"], mm), ratios(t["float32/step"], st)
        rows.append(SpeedRow(name, mm.median, st.median, mm_up.median, st_up.median, mm, st, mm_up, st_up))
    at_q1, at_q3, noisy = quartile_verdicts(rows)
    return SpeedEvidence(
        device=device,
        threads=torch.get_num_threads(),
        matmul_n=SPEED_MATMUL_N,
        block=SPEED_BLOCK,
        repeat=repeat,
        rows=tuple(rows),
        cpu_capability=torch.backends.cpu.get_cpu_capability(),
        claim_device="cuda",
        tells=SPEED_SCOPE[device]["tells"],
        cannot_tell=SPEED_SCOPE[device]["cannot_tell"],
        max_relative_spread=MAX_RELATIVE_SPREAD,
        verdict_at_q1=at_q1,
        verdict_at_q3=at_q3,
        too_noisy=noisy,
    )


def quartile_verdicts(rows: list[SpeedRow] | tuple[SpeedRow, ...]) -> tuple[str, str, bool]:
    """(verdict at the low dtypes' lower quartiles, at their upper quartiles, whether any spread is too wide)."""
    low = rows[1:]  # float32 first
    at_q1 = _speed_verdict([r.step_speedup_spread.q1 for r in low])
    at_q3 = _speed_verdict([r.step_speedup_spread.q3 for r in low])
    return at_q1, at_q3, any(r.step_speedup_spread.relative_spread > MAX_RELATIVE_SPREAD for r in low)


def _speed_verdict(speedups: list[float]) -> str:
    """holds: every low dtype at least 2× faster; does_not_hold: none faster at all; partly_holds otherwise."""
    return "holds" if min(speedups) >= 2 else ("does_not_hold" if max(speedups) < 1 else "partly_holds")


def speed_verdict(ev: SpeedEvidence) -> str:
    """The verdict of the medians, or inconclusive when the rounds are too noisy or the quartiles disagree."""
    if ev.too_noisy or ev.verdict_at_q1 != ev.verdict_at_q3:
        return "inconclusive"
    return _speed_verdict([r.step_speedup for r in ev.rows[1:]])


def check_speedup() -> Checked:
    """Claim: mixed precision trains 2–3× faster than float32. Judged on the training step's per-round speedup:
    holds if every low-precision dtype is at least 2× faster here, does not hold if none is faster at all,
    partly otherwise; inconclusive when the spread is too wide to say (see `speed_verdict`)."""
    ev = measure_speed()
    headline: dict[str, object] = {"device": ev.device}
    for r in ev.rows[1:]:
        headline |= {
            f"{r.dtype}_step_speedup": r.step_speedup,
            f"{r.dtype}_step_speedup_iqr": (r.step_speedup_spread.q1, r.step_speedup_spread.q3),
            f"{r.dtype}_matmul_speedup": r.matmul_speedup,
        }
    return Checked(9, speed_verdict(ev), {}, ev, headline)


# ── how a bf16 matmul accumulates (claim 10) ────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class AccumulationEvidence:
    """A bf16 dot product whose answer depends on the accumulator's width, and random bf16 matmuls.

    Designed probe: one 1.0 followed by `n_small` copies of `small` (a quarter of bf16's spacing at 1), dotted
    with ones. A bf16 accumulator rounds every partial sum and never moves off 1; a float32 accumulator sums
    exactly and rounds once at the end.
    """

    device: str  # where torch.matmul ran
    dtype: str  # "bfloat16"
    small: float
    n_small: int
    exact: float  # the exact sum
    rounded_once: float  # the exact sum rounded once to bf16: what a float32 accumulator gives
    low_accumulator: float  # a bf16 accumulator, rounded after every add, left to right
    measured: float  # torch.matmul of the bf16 operands
    output_dtype: str  # the dtype torch.matmul returned
    exact_partial_sums: tuple[float, ...]  # (n_small + 2,) after 0, 1, … terms
    low_partial_sums: tuple[float, ...]  # the same for the bf16 accumulator
    random_shape: tuple[int, int, int]  # (m, k, n) of the random matmul
    random_match: dict[str, float]  # "matmul" | "float32_accumulator" | "bfloat16_accumulator" → share of
    # the m·n results equal to the exact result rounded once to bf16
    accumulator: str  # "float32" | "bfloat16": the emulation torch.matmul's random results agree with better
    score_dtypes: dict[str, str]  # device → dtype of the attention block's scores (q·kᵀ) under bf16 autocast


ACCUMULATION_SMALL_TERMS = 255
RANDOM_MATMUL = (64, 1024, 64)


def _accumulate(terms: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Partial sums (k+1, ...) of terms (k, ...) with an accumulator stored in `dtype` after every add."""
    acc = torch.zeros(terms.shape[1:], dtype=dtype)
    sums = [acc]
    for t in terms:
        acc = (acc.to(torch.float64) + t.to(torch.float64)).to(dtype)
        sums.append(acc)
    return torch.stack(sums)


def check_matmul_accumulation() -> Checked:
    """Claim: a bf16 × bf16 matmul accumulates in float32 and returns float32 (so scores reach softmax in
    float32). Parts: the accumulation is float32-like; the scores come out float32 on every device."""
    low, device = torch.bfloat16, measured_device()
    small = torch.finfo(low).eps / 4
    terms = torch.tensor([1.0] + [small] * ACCUMULATION_SMALL_TERMS, dtype=torch.float64)  # (n,)
    exact_sums = torch.cat([torch.zeros(1, dtype=torch.float64), terms.cumsum(0)])  # exact: multiples of 2^-9
    low_sums = _accumulate(terms.to(low), low).to(torch.float64)
    row, col = terms.to(low).reshape(1, -1), torch.ones(terms.numel(), 1, dtype=low)
    result = row.to(device) @ col.to(device)  # (1, 1)

    g = torch.Generator().manual_seed(0)
    m, k, n = RANDOM_MATMUL
    a, b = torch.randn(m, k, generator=g).to(low), torch.randn(k, n, generator=g).to(low)
    exact = (a.double() @ b.double()).numpy()  # products of bf16 values are exact in float64; so is this sum
    once = torch.from_numpy(round_array(exact, "bfloat16"))  # (m, n)
    products = a.double().T.unsqueeze(2) * b.double().unsqueeze(1)  # (k, m, n): the terms, in order
    match = {
        "matmul": (a.to(device) @ b.to(device)).double().cpu() == once,
        "float32_accumulator": _accumulate(products, torch.float32)[-1].to(low).double() == once,
        "bfloat16_accumulator": _accumulate(products, low)[-1].double() == once,
    }
    share = {name: float(hit.double().mean()) for name, hit in match.items()}
    closer_to_f32 = abs(share["matmul"] - share["float32_accumulator"]) < abs(
        share["matmul"] - share["bfloat16_accumulator"]
    )
    once_designed = float(round_array(exact_sums[-1:].numpy(), "bfloat16")[0])
    wide = closer_to_f32 and result.item() == once_designed
    scores = {d: block_trace(d).trace.landmark_event("scores").outputs[0].dtype for d in DEVICES}
    ev = AccumulationEvidence(
        device=device,
        dtype=AUTOCAST_DTYPE,
        small=small,
        n_small=ACCUMULATION_SMALL_TERMS,
        exact=exact_sums[-1].item(),
        rounded_once=once_designed,
        low_accumulator=low_sums[-1].item(),
        measured=result.item(),
        output_dtype=dtype_name(result.dtype),
        exact_partial_sums=tuple(exact_sums.tolist()),
        low_partial_sums=tuple(low_sums.tolist()),
        random_shape=RANDOM_MATMUL,
        random_match=share,
        accumulator="float32" if wide else "bfloat16",
        score_dtypes=scores,
    )
    verdict = _all_some_none([wide, all(d == "float32" for d in scores.values())])
    headline = {
        "measured": ev.measured,
        "rounded_once": ev.rounded_once,
        "bf16_accumulator": ev.low_accumulator,
        "matmul_matches_rounded_once": share["matmul"],
        "accumulator": ev.accumulator,
    } | {f"{d}_scores": dt for d, dt in scores.items()}
    return Checked(10, verdict, {}, ev, headline)


# ── the claims ──────────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Claim:
    id: int
    key: str  # stable short name; views look up their wording by it
    seeds: tuple[str, ...]  # seed tutorial files it is drawn from, the most direct first (titles: SOURCES)
    check: Callable[[], Checked] = field(repr=False, compare=False)
    on_demand: bool = False  # slow (trains or times): views run it only when asked
    section: tuple[str, str] = ("", "")  # where in seeds[0] it is made: (heading as in the source, English gloss)


SEED_AUTOCAST = "000_807445a89ff10fc0.txt"  # autocast and self-attention precision
SEED_BF16_VS_FP16 = "001_5fc31ddab86f0670.txt"  # why bf16 rather than fp16
SEED_SOFTMAX = "002_8b429bfe48cefe11.txt"  # why self-attention/softmax needs precision
SEED_MID_TRAIN = "003_4f55f79ef9af6724.txt"  # a bf16 training script, explained
SEED_SFT = "004_9b39a333a37e4e48.txt"  # mixed-precision setup of an SFT script

# seed file → (its title as the source gives it, in Chinese where the source has one; an English gloss).
SOURCES: dict[str, tuple[str, str]] = {
    SEED_AUTOCAST: ("LLM训练中Autocast精度管理机制", "How autocast manages precision in LLM training"),
    SEED_BF16_VS_FP16: ("LLM训练BF16与FP16对比分析", "BF16 versus FP16 for LLM training"),
    SEED_SOFTMAX: (
        "为什么LLM训练中，Self-Attention层对精度的要求非常高？",
        "Self-Attention Precision in LLM Training (why self-attention needs high precision)",
    ),
    SEED_MID_TRAIN: (
        "Chat Dialogue Log：scripts/mid_train.py 中期训练代码的混合精度训练",
        "Chat log: mixed-precision training in the mid-training script scripts/mid_train.py",
    ),
    SEED_SFT: ("05 - 混合精度训练配置深度分析", "05 - Mixed-precision training setup, analysed in depth"),
}

CLAIMS: tuple[Claim, ...] = (
    Claim(
        1,
        "softmax_fp32",
        (SEED_AUTOCAST, SEED_SOFTMAX, SEED_MID_TRAIN, SEED_SFT),
        check_softmax_fp32,
        section=("1. Autocast 的核心工作机制", "1. How autocast works"),
    ),
    Claim(
        2,
        "matmul_low_precision",
        (SEED_BF16_VS_FP16, SEED_AUTOCAST, SEED_MID_TRAIN),
        check_matmul_low_precision,
        section=("2. 具体说说Autocast是如何实现的？ › 实现机制", "2. How autocast is implemented › Mechanism"),
    ),
    Claim(
        3,
        "layer_norm_fp32",
        (SEED_MID_TRAIN, SEED_SOFTMAX, SEED_SFT),
        check_layer_norm_fp32,
        section=(
            "问题 7：当你在 autocast 区域写代码时（比如 LayerNorm(Linear(x))）",
            "Question 7: LayerNorm(Linear(x)) inside an autocast region",
        ),
    ),
    Claim(
        4,
        "bf16_range",
        (SEED_BF16_VS_FP16, SEED_SFT),
        check_bf16_range,
        section=(
            "1. 为什么LLM要用BF16混合精度训练？相比FP16有哪些优势？",
            "1. Why LLMs train in BF16 mixed precision, and its advantages over FP16",
        ),
    ),
    Claim(
        5,
        "fp16_tiny_gradients",
        (SEED_SFT,),
        check_fp16_tiny_gradients,
        section=("三、FP16 vs BF16 详细对比 › 3.2 关键区别", "3. FP16 vs BF16 in detail › 3.2 Key differences"),
    ),
    Claim(
        6,
        "close_scores",
        (SEED_SOFTMAX,),
        check_close_scores,
        section=(
            "四个关键技术原因 › 1. Softmax函数的指数级放大效应",
            "Four technical reasons › 1. Softmax amplifies exponentially",
        ),
    ),
    Claim(
        7,
        "loss_fp32",
        (SEED_SFT, SEED_BF16_VS_FP16, SEED_SOFTMAX),
        check_loss_fp32,
        section=("五、autocast 自动混合精度原理 › 5.2 实际应用示例", "5. How autocast works › 5.2 A worked example"),
    ),
    Claim(
        8,
        "bf16_no_scaler",
        (SEED_SFT, SEED_MID_TRAIN),
        check_bf16_needs_no_scaler,
        on_demand=True,
        section=(
            "七、完整训练流程示例 › 7.1 BF16训练（推荐）",
            "7. Complete training loops › 7.1 BF16 training (recommended)",
        ),
    ),
    Claim(
        9,
        "speedup",
        (SEED_SFT,),
        check_speedup,
        on_demand=True,
        section=(
            "二、什么是混合精度训练？ › 2.2 混合精度训练",
            "2. What mixed-precision training is › 2.2 Mixed-precision training",
        ),
    ),
    Claim(
        10,
        "matmul_accumulation",
        (SEED_AUTOCAST,),
        check_matmul_accumulation,
        section=("2. 在Self-Attention层中的具体应用", "2. Inside the self-attention layer"),
    ),
    Claim(
        11,
        "bf16_tiny_gradients",
        (SEED_BF16_VS_FP16,),
        check_bf16_tiny_gradients,
        section=(
            "1. 为什么LLM要用BF16混合精度训练？ › BF16 的优势（对于LLM训练）",
            "1. Why BF16 for LLM training › BF16's advantages for LLM training",
        ),
    ),
)


def claim(claim_id: int) -> Claim:
    """The claim with this id; ConfigError("id", …) for any other."""
    found = next((c for c in CLAIMS if c.id == claim_id), None)
    if found is None:
        raise ConfigError("id", claim_id, [c.id for c in CLAIMS], "no such claim")
    return found


def check(claim_id: int) -> Checked:
    """Measure one claim now (no caching here beyond the traced attention block)."""
    return claim(claim_id).check()


def verdict_counts(results: list[Checked]) -> dict[str, int]:
    """How many of `results` got each verdict, in VERDICTS order."""
    return {v: sum(r.verdict == v for r in results) for v in VERDICTS}
