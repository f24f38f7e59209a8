"""GradScaler, measured: train the attention block step by step under autocast with a real GradScaler.

The task is tiny and deterministic: copy a token sequence. Each step draws `accum` sequences of `seq_len`
tokens from a generator seeded by the model seed; the input is a fixed random embedding of the tokens (drawn
first from the same generator) and the targets are the tokens themselves. Every run with the same seed sees
the same data, so recipes can be compared step for step.

Each optimizer step yields a `StepRecord` read from the objects themselves: the scaler's scale before and
after `update()`, its found-inf verdict and growth tracker, whether the parameters really changed (compared
bit for bit), the loss, the unscaled gradient norm, and gradient health — the share of gradient elements that
are exactly zero after the low-precision backward while the float32 backward of the same step (same
parameters, same data, no autocast) has them non-zero, for the scaled backward and for the same backward
without scaling.

`train(cfg)` yields records as they are computed (for live drawing); `run(cfg)` collects them.
`compare_recipes(cfg)` runs fp32, bf16, fp16 + GradScaler and fp16 without a scaler on the same seed and data.
"""

from __future__ import annotations

import math
import statistics
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field, fields, replace

import torch

# Private torch modules (a move fails these imports): the dispatch mode counts the bytes every aten call keeps
# alive, pytree finds the tensors in its nested arguments.
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from mpviz.attention import available_devices, compute_device
from mpviz.emulation import cuda_policy_on_cpu
from mpviz.isolation import autocast_shared
from mpviz.model import AttentionConfig, ConfigError, build, clamp, parse_autocast_dtype, validate
from mpviz.stats import FormatRange, tensor_stats

Histogram = tuple[tuple[int, int], ...]  # (floor(log2|g|), count) for non-zero finite g, ascending


@dataclass(frozen=True)
class ScalerSettings:
    """The four numbers that drive `torch.amp.GradScaler`."""

    init_scale: float
    growth_factor: float
    backoff_factor: float
    growth_interval: int

    @classmethod
    def defaults(cls, device: str = "cpu") -> ScalerSettings:
        """What a fresh `torch.amp.GradScaler` on `device`'s scaler device reports (read, never typed in).

        ConfigError("device", …) for a device this process cannot use: a GradScaler made for "cuda" on a build
        without a GPU disables itself and then has no settings to read.
        """
        if device not in available_devices():
            raise ConfigError("device", device, available_devices(), "device not available here")
        s = torch.amp.GradScaler(compute_device(device))
        return cls(s.get_scale(), s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval())


@dataclass(frozen=True)
class TrainLimits:
    """Ceilings for training runs (a step runs three backwards: its own and two references)."""

    max_steps: int = 500
    max_accum: int = 8
    max_seq_len: int = 64
    max_d_model: int = 128
    min_lr: float = 1e-6
    max_lr: float = 1.0
    max_clip: float = 1e6
    min_loss_multiplier: float = 2.0**-60
    max_loss_multiplier: float = 2.0**20
    max_growth_factor: float = 16.0
    max_growth_interval: int = 1_000_000


TRAIN_LIMITS = TrainLimits()


@dataclass(frozen=True)
class TrainConfig:
    """One training run. `scaler=None` trains without a GradScaler."""

    model: AttentionConfig = field(default_factory=AttentionConfig)
    device: str = "cpu"  # one of mpviz.available_devices(): "cpu", "cuda", "cuda-sim" (CUDA's policy on CPU)
    dtype: str = "fp16"  # autocast dtype: "off" | "fp16" | "bf16"
    scaler: ScalerSettings | None = field(default_factory=ScalerSettings.defaults)
    steps: int = 50
    inject_inf: tuple[int, ...] = ()  # optimizer steps at which one gradient element is set to +inf
    loss_multiplier: float = 1.0  # multiplies the loss before backward: < 1 pushes gradients toward underflow
    clip: float | None = None  # max gradient norm; with a scaler, `unscale_` runs before `clip_grad_norm_`
    accum: int = 1  # micro-batches (backwards) per optimizer step
    lr: float = 1e-2  # Adam


@dataclass(frozen=True)
class StepRecord:
    """What one optimizer step did. Scale fields are None when the run has no GradScaler."""

    step: int
    loss: float  # mean task loss of the step's micro-batches, before the loss multiplier
    scale_before: float | None  # the scale the backward ran with
    scale_after: float | None  # after scaler.update()
    growth_tracker: int | None  # clean steps in a row, after update()
    found_inf: bool  # with a scaler: its own verdict after unscale_; without: any gradient element non-finite
    skipped: bool  # finite parameters, bit-for-bit unchanged by the optimizer step
    params_finite: bool  # after the step; once inf/NaN reach the parameters, training is lost
    injected: bool  # an inf was written into one gradient element before unscale_
    grad_norm: float  # 2-norm of all unscaled gradients, before clipping (inf/nan when non-finite)
    zero_grad_fraction: float  # of elements non-zero in the fp32 reference: zero in this run's backward
    zero_grad_fraction_unscaled: float  # the same for the step's low-precision backward without scaling
    grad_exponents: Histogram  # of the fp32 reference gradients
    grad_exponents_scaled: Histogram  # of the fp32 reference gradients × scale_before (empty without a scaler)
    step_ms: float  # wall time of forward, backward and optimizer step (references excluded)

    @property
    def scale_change(self) -> str:
        """'grow', 'backoff', 'hold', or 'none' (no scaler)."""
        if self.scale_before is None or self.scale_after is None:
            return "none"
        if self.scale_after > self.scale_before:
            return "grow"
        return "backoff" if self.scale_after < self.scale_before else "hold"


@dataclass(frozen=True)
class ScalerRun:
    config: TrainConfig
    defaults: ScalerSettings  # a fresh GradScaler's settings on this device
    format_range: FormatRange  # range of the autocast dtype (float16's when autocast is off)
    steps: tuple[StepRecord, ...]

    @property
    def skipped_steps(self) -> tuple[int, ...]:
        return tuple(r.step for r in self.steps if r.skipped)


@dataclass(frozen=True)
class StepMemory:
    """Peak bytes one training step allocates on top of what existed before it (see `step_memory`)."""

    backward_peak_bytes: int  # during forward + backward
    peak_bytes: int  # during the whole step (backward, unscale, clip, optimizer step)


@dataclass(frozen=True)
class RecipeResult:
    recipe: str  # a key of RECIPES
    dtype: str  # "off" | "fp16" | "bf16"
    scaler: bool
    losses: tuple[float, ...]
    skipped_steps: tuple[int, ...]
    mean_zero_grad_fraction: float  # gradient elements the recipe's own backward lost to zero, mean over steps
    nonfinite_steps: tuple[int, ...]  # steps whose gradients held inf/nan
    diverged_at: int | None  # first step after which the parameters held inf/nan (None: never)
    ms_per_step: float  # median step wall time
    memory: StepMemory

    @property
    def final_loss(self) -> float:
        return self.losses[-1]


# recipe → (autocast dtype, GradScaler on)
RECIPES: dict[str, tuple[str, bool]] = {
    "fp32": ("off", False),
    "bf16": ("bf16", False),
    "fp16+scaler": ("fp16", True),
    "fp16": ("fp16", False),
}


# ── devices ─────────────────────────────────────────────────────────────────────────────────────────────────
def _policy(device: str):
    """CUDA's autocast policy on CPU for "cuda-sim" (exclusive: enter it before `autocast_shared`)."""
    return cuda_policy_on_cpu() if device == "cuda-sim" else nullcontext()


# ── limits ──────────────────────────────────────────────────────────────────────────────────────────────────
def validate_train(cfg: TrainConfig) -> TrainConfig:
    """Return `cfg` unchanged if it is within `TRAIN_LIMITS` (and the model within `mpviz.model.LIMITS`).

    Raises ConfigError naming the first field out of bounds. Scaler bounds are GradScaler's own (growth > 1,
    backoff < 1) plus a scale that float32, the dtype of GradScaler's scale tensor, can hold.
    """
    lim = TRAIN_LIMITS
    if cfg.device not in available_devices():
        raise ConfigError("device", cfg.device, available_devices(), "device not available here")
    dtype = parse_autocast_dtype(cfg.dtype)
    validate(cfg.model, compute_device(cfg.device), dtype)
    checks: list[tuple[str, object, object, bool, str]] = [
        (
            "seq_len",
            cfg.model.seq_len,
            lim.max_seq_len,
            cfg.model.seq_len <= lim.max_seq_len,
            "too long to train",
        ),
        (
            "d_model",
            cfg.model.d_model,
            lim.max_d_model,
            cfg.model.d_model <= lim.max_d_model,
            "too wide to train",
        ),
        ("steps", cfg.steps, (1, lim.max_steps), 1 <= cfg.steps <= lim.max_steps, "out of range"),
        ("accum", cfg.accum, (1, lim.max_accum), 1 <= cfg.accum <= lim.max_accum, "out of range"),
        ("lr", cfg.lr, (lim.min_lr, lim.max_lr), lim.min_lr <= cfg.lr <= lim.max_lr, "out of range"),
        (
            "loss_multiplier",
            cfg.loss_multiplier,
            (lim.min_loss_multiplier, lim.max_loss_multiplier),
            lim.min_loss_multiplier <= cfg.loss_multiplier <= lim.max_loss_multiplier,
            "out of range",
        ),
        (
            "clip",
            cfg.clip,
            (0, lim.max_clip),
            cfg.clip is None or 0 < cfg.clip <= lim.max_clip,
            "must be None or in (0, max]",
        ),
    ]
    for k in cfg.inject_inf:
        checks.append(("inject_inf", k, (0, cfg.steps - 1), 0 <= k < cfg.steps, "step out of range"))
    s = cfg.scaler
    if s is not None:
        fp32_max = torch.finfo(torch.float32).max
        checks += [
            (
                "init_scale",
                s.init_scale,
                fp32_max,
                0 < s.init_scale <= fp32_max,
                "must be > 0 and fit float32",
            ),
            (
                "growth_factor",
                s.growth_factor,
                (1, lim.max_growth_factor),
                1 < s.growth_factor <= lim.max_growth_factor,
                "must be > 1",
            ),
            ("backoff_factor", s.backoff_factor, (0, 1), 0 < s.backoff_factor < 1, "must be in (0, 1)"),
            (
                "growth_interval",
                s.growth_interval,
                (1, lim.max_growth_interval),
                1 <= s.growth_interval <= lim.max_growth_interval,
                "out of range",
            ),
        ]
    for name, value, limit, ok, reason in checks:
        if not ok:
            raise ConfigError(name, value, limit, reason)
    return cfg


_SCALER_FIELDS = ("init_scale", "growth_factor", "backoff_factor", "growth_interval")
_MODEL_FIELDS = tuple(f.name for f in fields(AttentionConfig))


def clamp_train(cfg: TrainConfig) -> tuple[TrainConfig, list[ConfigError]]:
    """The nearest runnable config, and the errors corrected to get there (for a UI to show).

    Out-of-range training knobs go back to their `TrainConfig` defaults, scaler knobs to a fresh GradScaler's,
    out-of-range injection steps are dropped, model sizes above the training ceilings go to the ceiling, other
    model fields are fixed by `mpviz.model.clamp`, an unavailable device becomes "cpu".
    """
    fixed: list[ConfigError] = []
    default = TrainConfig()
    for _ in range(len(fields(TrainConfig)) + len(_MODEL_FIELDS) + len(_SCALER_FIELDS)):  # one fix per pass
        try:
            return validate_train(cfg), fixed
        except ConfigError as e:
            fixed.append(e)
            if e.field == "device":
                cfg = replace(cfg, device="cpu")
            elif e.field == "inject_inf":
                cfg = replace(cfg, inject_inf=tuple(k for k in cfg.inject_inf if 0 <= k < cfg.steps))
            elif e.field in _SCALER_FIELDS and cfg.scaler is not None:
                good = getattr(ScalerSettings.defaults(cfg.device), e.field)
                cfg = replace(cfg, scaler=replace(cfg.scaler, **{e.field: good}))
            elif e.field in ("seq_len", "d_model") and isinstance(e.limit, int):  # a training ceiling
                cfg = replace(cfg, model=replace(cfg.model, **{e.field: e.limit}))
            elif e.field in _MODEL_FIELDS:
                cfg = replace(cfg, model=clamp(cfg.model, compute_device(cfg.device), _dtype_or_none(cfg))[0])
            else:
                cfg = replace(cfg, **{e.field: getattr(default, e.field)})
    return validate_train(cfg), fixed


def _dtype_or_none(cfg: TrainConfig) -> torch.dtype | None:
    try:
        return parse_autocast_dtype(cfg.dtype)
    except ConfigError:
        return None


# ── measuring ───────────────────────────────────────────────────────────────────────────────────────────────
class _AllocationPeak(TorchDispatchMode):
    """Peak bytes held by tensor storages that ops create inside the region (older storages don't count).

    Every op's outputs are checked: a storage not seen before is a new allocation, counted until Python's
    weakref to it says it is freed. Thread-local like every dispatch mode, so concurrent runs don't mix.
    """

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self.peak_at_exit: list[int] = []  # running peak when each entry of the region ended
        self._seen: weakref.WeakSet = weakref.WeakSet()

    def __exit__(self, *exc) -> None:
        self.peak_at_exit.append(self.peak)
        return super().__exit__(*exc)

    def _free(self, nbytes: int) -> None:
        self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for t in pytree.tree_leaves((args, kwargs)):
            if isinstance(t, torch.Tensor):
                self._seen.add(t.untyped_storage())  # existed before (or already counted)
        out = func(*args, **kwargs)
        for t in pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor):
                s = t.untyped_storage()
                if s not in self._seen:
                    self._seen.add(s)
                    self.live += s.nbytes()
                    self.peak = max(self.peak, self.live)
                    weakref.finalize(s, self._free, s.nbytes())
        return out


class _CudaPeak:
    """The CUDA caching allocator's peak above the bytes allocated when the region was first entered."""

    def __init__(self) -> None:
        self.base: int | None = None
        self.peak = 0
        self.peak_at_exit: list[int] = []

    def __enter__(self) -> None:
        torch.cuda.synchronize()
        if self.base is None:
            self.base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()

    def __exit__(self, *exc) -> None:
        torch.cuda.synchronize()
        self.peak = max(self.peak, torch.cuda.max_memory_allocated() - (self.base or 0))
        self.peak_at_exit.append(self.peak)


def _lost_fraction(grads: list[torch.Tensor], ref: list[torch.Tensor]) -> float:
    """Of the elements non-zero in `ref`, the share that is exactly zero in `grads`."""
    lost = sum(int(((g == 0) & (r != 0)).sum()) for g, r in zip(grads, ref, strict=True))
    total = sum(int((r != 0).sum()) for r in ref)
    return lost / total if total else 0.0


def _finite(tensors: list[torch.Tensor]) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in tensors)


def _unchanged(before: list[torch.Tensor], after: list[torch.Tensor]) -> bool:
    """Bit-for-bit equality (NaN == NaN here, unlike torch.equal)."""
    return all(
        torch.equal(b.reshape(-1).view(torch.uint8), a.detach().reshape(-1).view(torch.uint8))
        for b, a in zip(before, after, strict=True)
    )


class _CopyTask:
    """Deterministic data: a fixed embedding (vocab, d) and, per draw, a token sequence (T,) to copy."""

    def __init__(self, cfg: AttentionConfig, device: str) -> None:
        self._g = torch.Generator().manual_seed(cfg.seed)
        self._cfg, self._device = cfg, device
        self._embedding = torch.randn(cfg.vocab, cfg.d_model, generator=self._g)  # (vocab, C)

    def draw(self) -> tuple[torch.Tensor, torch.Tensor]:
        tokens = torch.randint(0, self._cfg.vocab, (self._cfg.seq_len,), generator=self._g)  # (T,)
        return self._embedding[tokens].to(self._device), tokens.to(self._device)  # x (T, C), targets (T,)


class _Trainer:
    """Model, Adam, GradScaler and data of one run; `step(k)` performs and measures optimizer step k."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.device = compute_device(cfg.device)
        self.dtype = parse_autocast_dtype(cfg.dtype)
        self.model, _, _ = build(cfg.model, device=self.device)
        self.params = list(self.model.parameters())
        self.opt = torch.optim.Adam(self.params, lr=cfg.lr)
        s = cfg.scaler
        self.scaler = (
            torch.amp.GradScaler(
                compute_device(cfg.device),
                s.init_scale,
                s.growth_factor,
                s.backoff_factor,
                s.growth_interval,
            )
            if s is not None
            else None
        )
        self.task = _CopyTask(cfg.model, self.device)

    def _backward(self, batches, dtype: torch.dtype | None, scaled: bool) -> list[float]:
        """Forward + backward of every micro-batch into fresh .grad; returns the task losses."""
        cfg = self.cfg
        self.opt.zero_grad(set_to_none=True)
        losses = []
        for x, targets in batches:
            with autocast_shared():
                ac = torch.autocast(self.device, dtype=dtype) if dtype is not None else nullcontext()
                with ac:
                    loss = self.model(x, targets)
                objective = loss * (cfg.loss_multiplier / cfg.accum)
                (self.scaler.scale(objective) if scaled else objective).backward()
            losses.append(loss.item())
        return losses

    def _grads(self) -> list[torch.Tensor]:
        return [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in self.params]

    def _sync(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()

    def step(self, k: int, memory: _AllocationPeak | _CudaPeak | None = None) -> StepRecord:
        """Optimizer step k. Timed (and with `memory` measured): its backward and update, not references."""
        with _policy(self.cfg.device):  # registers kernels once per step, before the timed region starts
            return self._step(k, memory)

    def _step(self, k: int, memory: _AllocationPeak | _CudaPeak | None) -> StepRecord:
        cfg, scaler = self.cfg, self.scaler
        region = memory if memory is not None else nullcontext()
        batches = [self.task.draw() for _ in range(cfg.accum)]
        # References on the same parameters and data: float32 without autocast, and low precision unscaled.
        self._backward(batches, None, scaled=False)
        ref = self._grads()
        if scaler is not None and self.dtype is not None:
            self._backward(batches, self.dtype, scaled=False)
            unscaled_lost = _lost_fraction(self._grads(), ref)
        else:
            unscaled_lost = None  # without a scaler the step's own backward is the unscaled one
        before = [p.detach().clone() for p in self.params]
        scale_before = scaler.get_scale() if scaler is not None else None

        t0 = time.perf_counter()
        with region:
            losses = self._backward(batches, self.dtype, scaled=scaler is not None)
            self._sync()
        backward_s = time.perf_counter() - t0
        lost = _lost_fraction([p.grad for p in self.params], ref)  # before the injection and unscale_
        injected = k in cfg.inject_inf
        t0 = time.perf_counter()
        with region:
            norm, found_inf = self._update(injected)
            self._sync()
        update_s = time.perf_counter() - t0

        flat_ref = torch.cat([r.reshape(-1) for r in ref]).to("cpu", torch.float64)  # (n_params,)
        return StepRecord(
            step=k,
            loss=sum(losses) / len(losses),
            scale_before=scale_before,
            scale_after=scaler.get_scale() if scaler is not None else None,
            # Private: GradScaler has no public getter for its growth counter; a rename fails tests/test_scaler.py.
            growth_tracker=scaler._get_growth_tracker() if scaler is not None else None,
            found_inf=found_inf,
            skipped=_finite(before) and _unchanged(before, self.params),  # NaN weights stay NaN: no verdict
            params_finite=_finite(self.params),
            injected=injected,
            grad_norm=norm,
            zero_grad_fraction=lost,
            zero_grad_fraction_unscaled=lost if unscaled_lost is None else unscaled_lost,
            grad_exponents=tensor_stats(flat_ref).log2_hist,
            grad_exponents_scaled=tensor_stats(flat_ref * scale_before).log2_hist if scaler is not None else (),
            step_ms=(backward_s + update_s) * 1e3,
        )

    def _update(self, inject: bool) -> tuple[float, bool]:
        """(Inject an inf,) unscale_, clip, optimizer step, scaler update → (grad norm, found inf)."""
        cfg, scaler = self.cfg, self.scaler
        if inject:
            with torch.no_grad():
                self.params[0].grad.view(-1)[0] = math.inf
        if scaler is not None:
            scaler.unscale_(self.opt)
        grads = [p.grad for p in self.params]
        if cfg.clip is not None:
            norm = float(torch.nn.utils.clip_grad_norm_(self.params, cfg.clip))
        else:
            norm = float(torch.nn.utils.get_total_norm(grads))
        if scaler is not None:
            found_inf = sum(v.item() for v in scaler._found_inf_per_device(self.opt).values()) > 0
            scaler.step(self.opt)
            scaler.update()
        else:
            found_inf = not all(bool(torch.isfinite(g).all()) for g in grads)
            self.opt.step()
        return norm, found_inf


# ── public API ──────────────────────────────────────────────────────────────────────────────────────────────
def train(cfg: TrainConfig) -> Iterator[StepRecord]:
    """Yield one `StepRecord` per optimizer step as soon as it is measured. Validates before the first step.

    Stopping early is safe: no lock is held between steps.
    """
    validate_train(cfg)
    trainer = _Trainer(cfg)
    return (trainer.step(k) for k in range(cfg.steps))


def format_range(dtype: str) -> FormatRange:
    """Range of the autocast dtype the gradients pass through (float16's when autocast is off)."""
    return FormatRange.of(parse_autocast_dtype(dtype) or torch.float16)


def collect(cfg: TrainConfig, steps: tuple[StepRecord, ...]) -> ScalerRun:
    """Wrap records (e.g. streamed from `train`) into a `ScalerRun`."""
    return ScalerRun(cfg, ScalerSettings.defaults(cfg.device), format_range(cfg.dtype), steps)


def run(cfg: TrainConfig) -> ScalerRun:
    """All steps of `cfg`, collected."""
    return collect(cfg, tuple(train(cfg)))


def step_memory(cfg: TrainConfig) -> StepMemory:
    """Peak bytes allocated by one steady-state training step (the second: the first creates Adam's state).

    Measured over the step's forward + backward and then its update (not its reference backwards). CUDA: the
    caching allocator's peak above what was allocated when the step began. CPU: the peak of live tensor
    storage created by the step's ops, tracked op by op (activations saved for backward, autocast's weight
    copies, gradients, optimizer temporaries).
    """
    validate_train(cfg)
    trainer = _Trainer(replace(cfg, steps=2, inject_inf=()))
    trainer.step(0)
    memory = _CudaPeak() if trainer.device == "cuda" else _AllocationPeak()
    trainer.step(1, memory)
    backward_peak, step_peak = memory.peak_at_exit  # the step enters the region twice: backward, update
    return StepMemory(backward_peak, step_peak)


def recipe_config(recipe: str, base: TrainConfig) -> TrainConfig:
    """`base` with the recipe's autocast dtype and scaler (base's scaler settings, or a fresh scaler's)."""
    if recipe not in RECIPES:
        raise ConfigError("recipe", recipe, sorted(RECIPES), "unknown recipe")
    dtype, scaled = RECIPES[recipe]
    settings = (base.scaler or ScalerSettings.defaults(base.device)) if scaled else None
    return replace(base, dtype=dtype, scaler=settings)


def run_recipe(recipe: str, base: TrainConfig) -> RecipeResult:
    """Train `base` with one recipe and summarise it."""
    cfg = recipe_config(recipe, base)
    records = run(cfg).steps
    return RecipeResult(
        recipe=recipe,
        dtype=cfg.dtype,
        scaler=cfg.scaler is not None,
        losses=tuple(r.loss for r in records),
        skipped_steps=tuple(r.step for r in records if r.skipped),
        mean_zero_grad_fraction=statistics.fmean(r.zero_grad_fraction for r in records),
        nonfinite_steps=tuple(r.step for r in records if r.found_inf),
        diverged_at=next((r.step for r in records if not r.params_finite), None),
        ms_per_step=statistics.median(r.step_ms for r in records),
        memory=step_memory(cfg),
    )


def compare_recipes(base: TrainConfig, on_start: Callable[[int, str], None] | None = None) -> tuple[RecipeResult, ...]:
    """Every recipe in RECIPES on `base`'s seed, data and knobs; `on_start(i, name)` before each (for progress)."""
    validate_train(base)
    results = []
    for i, name in enumerate(RECIPES):
        if on_start is not None:
            on_start(i, name)
        results.append(run_recipe(name, base))
    return tuple(results)
