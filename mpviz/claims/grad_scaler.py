"""Claims about GradScaler, checked with a real `torch.amp.GradScaler` on small training steps.

Claim 8 trains the four recipes of `mpviz.scaler` (slow: views run it on demand). Claims 18 and 19 take one
optimizer step of a tiny attention block and read the scaler between its calls: what `scale()` multiplies by,
what the gradients hold before and after `unscale_()`, and the scale after `step()` and after `update()`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mpviz.claims.devices import AUTOCAST_DTYPE, DEVICES
from mpviz.claims.op_dtypes import LOW, OpCall, OpRow, measure_row
from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.isolation import autocast_shared
from mpviz.model import AttentionConfig, build
from mpviz.scaler import RecipeResult, ScalerSettings, TrainConfig, compare_recipes
from mpviz.stats import dtype_name

SMALL_BLOCK = AttentionConfig(seq_len=8, d_model=32, n_heads=2)  # one step takes milliseconds


# ── training without a GradScaler (claim 8) ─────────────────────────────────────────────────────────────────
LOSS_MULTIPLIER = 2.0**-16  # pushes the gradients down to where fp16 underflows
# An exact (float64) gradient element this far below the model's largest one is float64's rounding of a true 0:
# k_proj.bias's gradient is 0 in exact arithmetic (softmax ignores a shift of a whole row of scores) and comes out
# near 1e-23 in float64, against 1e-6 for the largest. Noise of float64 sits near 2^-52 of the terms it sums.
EXACT_ZERO_BELOW = 2.0**-40
UNDERFLOW_RECIPES = ("bf16", "fp16+scaler", "fp16")


@dataclass(frozen=True)
class RecipeUnderflow:
    """One backward of the first step under a recipe, against the exact (float64) gradient of the same step."""

    recipe: str  # one of UNDERFLOW_RECIPES
    lost: int  # elements whose exact gradient is non-zero that came out exactly 0
    lost_by_parameter: dict[str, int]  # parameter → its lost elements (only those that lost any)


@dataclass(frozen=True)
class ScalerEvidence:
    config: TrainConfig  # the base run every recipe trained
    recipes: tuple[RecipeResult, ...]  # fp32, bf16, fp16+scaler, fp16: trained, for inf/NaN and skipped steps
    nonzero: int  # gradient elements whose exact value is non-zero (above EXACT_ZERO_BELOW × the largest)
    exact_zero: dict[str, int]  # parameter → its elements whose exact gradient is 0 (excluded from counting)
    underflow: tuple[RecipeUnderflow, ...]  # UNDERFLOW_RECIPES order

    def recipe(self, name: str) -> RecipeResult:
        return next(r for r in self.recipes if r.recipe == name)

    def lost(self, name: str) -> RecipeUnderflow:
        return next(u for u in self.underflow if u.recipe == name)


def scaler_check_config() -> TrainConfig:
    """A tiny run (T=8, d=32, 10 steps) with the loss × 2^-16: gradients that small are where fp16 underflows."""
    return TrainConfig(
        model=SMALL_BLOCK, steps=10, loss_multiplier=LOSS_MULTIPLIER, scaler=ScalerSettings.defaults("cpu")
    )


def _first_step_grads(
    recipe: str | None, cfg: AttentionConfig, multiplier: float = LOSS_MULTIPLIER
) -> dict[str, torch.Tensor]:
    """Parameter → gradient of the first step's loss × `multiplier`: float64 without autocast (recipe None),
    else under the recipe's autocast on CPU, through a real GradScaler("cpu") for "fp16+scaler" (unscaled)."""
    model, x, targets = build(cfg)
    if recipe is None:
        model, x = model.double(), x.double()
    low = torch.bfloat16 if recipe == "bf16" else torch.float16
    with autocast_shared(), torch.autocast("cpu", dtype=low, enabled=recipe is not None):
        loss = model(x, targets) * multiplier
    if recipe == "fp16+scaler":
        scaler = torch.amp.GradScaler("cpu")
        scaler.scale(loss).backward()
        scaler.unscale_(torch.optim.SGD(model.parameters(), lr=0.0))
    else:
        loss.backward()
    return {name: p.grad.detach() for name, p in model.named_parameters()}


def measure_underflow(cfg: AttentionConfig = SMALL_BLOCK) -> tuple[int, dict[str, int], tuple[RecipeUnderflow, ...]]:
    """(elements with a non-zero exact gradient, per parameter its exact zeros, each recipe's losses to zero)."""
    exact = _first_step_grads(None, cfg)
    floor = EXACT_ZERO_BELOW * max(g.abs().max().item() for g in exact.values())
    nonzero = {n: g.abs() > floor for n, g in exact.items()}
    underflow = []
    for recipe in UNDERFLOW_RECIPES:
        grads = _first_step_grads(recipe, cfg)
        lost = {n: int(((grads[n] == 0) & nz).sum()) for n, nz in nonzero.items()}
        underflow.append(RecipeUnderflow(recipe, sum(lost.values()), {n: k for n, k in lost.items() if k}))
    zeros = {n: int((~nz).sum()) for n, nz in nonzero.items() if not nz.all()}
    return sum(int(nz.sum()) for nz in nonzero.values()), zeros, tuple(underflow)


def check_bf16_needs_no_scaler() -> Checked:
    """Claim: bf16 training needs no GradScaler, since its gradients do not underflow. Parts: bf16 without a
    scaler never sees inf/NaN in a training run; in the first step's backward it loses no gradient element
    whose exact (float64) value is non-zero. Elements whose exact gradient is 0 are not counted: a zero there
    is right, not an underflow."""
    cfg = scaler_check_config()
    nonzero, zeros, underflow = measure_underflow(cfg.model)
    ev = ScalerEvidence(cfg, compare_recipes(cfg), nonzero, zeros, underflow)
    bf16 = ev.recipe("bf16")
    parts = [
        Part("stays_finite", not bf16.nonfinite_steps and bf16.diverged_at is None),
        Part("loses_none", ev.lost("bf16").lost == 0),
    ]
    headline: dict[str, object] = {f"{u.recipe}_lost_to_zero": u.lost for u in underflow}
    headline |= {"nonzero_exact_elements": nonzero, "bf16_nonfinite_steps": len(bf16.nonfinite_steps)}
    return judged(8, parts, ev, headline)


# ── one step, watched between the scaler's calls (claims 18, 19) ────────────────────────────────────────────
@dataclass(frozen=True)
class ScalerStep:
    """One optimizer step of SMALL_BLOCK under bf16 autocast, with the scaler read after each of its calls."""

    enabled: bool  # GradScaler(enabled=…)
    scale: float  # get_scale() before the step (1.0 when disabled: the scaler multiplies by nothing)
    loss_ratio: float  # scaler.scale(loss) / loss
    grad_ratio: float  # median over gradient elements of (grad before unscale_) / (grad without a scaler)
    grads_restored: bool  # after unscale_ every gradient equals the no-scaler run's, bit for bit
    inf_planted: bool  # one gradient element was set to +inf before unscale_ (what an fp16 overflow leaves)
    params_changed_in_step: bool  # scaler.step(optimizer) moved the parameters
    scale_after_step: float
    scale_after_update: float
    same_update_as_without: bool  # parameters after the step equal the no-scaler run's, bit for bit


def _plain_step(cfg: AttentionConfig) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Gradients and parameters after one bf16-autocast SGD step without a scaler."""
    model, x, targets = build(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with autocast_shared(), torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x, targets)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    opt.step()
    return grads, [p.detach().clone() for p in model.parameters()]


def scaler_step(enabled: bool = True, plant_inf: bool = False, cfg: AttentionConfig = SMALL_BLOCK) -> ScalerStep:
    """One bf16-autocast SGD step of `cfg` through a real GradScaler("cpu"), compared with the same step without."""
    plain_grads, plain_params = _plain_step(cfg)
    model, x, targets = build(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", enabled=enabled)
    scale = scaler.get_scale() if enabled else 1.0  # a disabled scaler reports 1.0 too; be explicit
    with autocast_shared(), torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x, targets)
    scaled = scaler.scale(loss)
    scaled.backward()
    params = list(model.parameters())
    ratio = torch.cat([(p.grad / g).flatten() for p, g in zip(params, plain_grads, strict=True) if g.count_nonzero()])
    grad_ratio = ratio[torch.isfinite(ratio)].median().item()
    if plant_inf:
        params[0].grad.view(-1)[0] = float("inf")
    scaler.unscale_(opt)
    restored = all(torch.equal(p.grad, g) for p, g in zip(params, plain_grads, strict=True))
    before = [p.detach().clone() for p in params]
    scaler.step(opt)
    changed = any(not torch.equal(b, p) for b, p in zip(before, params, strict=True))
    after_step = scaler.get_scale() if enabled else 1.0
    scaler.update()
    return ScalerStep(
        enabled=enabled,
        scale=scale,
        loss_ratio=(scaled / loss).item(),
        grad_ratio=grad_ratio,
        grads_restored=restored,
        inf_planted=plant_inf,
        params_changed_in_step=changed,
        scale_after_step=after_step,
        scale_after_update=scaler.get_scale() if enabled else 1.0,
        same_update_as_without=all(torch.equal(p, q) for p, q in zip(params, plain_params, strict=True)),
    )


@dataclass(frozen=True)
class NoOpEvidence:
    enabled: ScalerStep  # GradScaler("cpu") as the tutorials write it
    disabled: ScalerStep  # GradScaler(enabled=False), as one tutorial's script does for bf16
    defaults: ScalerSettings  # read from a fresh GradScaler


def check_scaler_no_op_under_bf16() -> Checked:
    """Claim: under bf16 a GradScaler is a no-op. Parts: scale() leaves the loss as it is; the gradients
    backward leaves are the unscaled ones; the update equals the one without a scaler."""
    on, off = scaler_step(enabled=True), scaler_step(enabled=False)
    ev = NoOpEvidence(on, off, ScalerSettings.defaults("cpu"))
    parts = [
        Part("loss_unscaled", on.loss_ratio == 1.0),
        Part("gradients_unscaled", on.grad_ratio == 1.0),
        Part("same_update", on.same_update_as_without),
    ]
    headline = {
        "loss_ratio": on.loss_ratio,
        "grad_ratio": on.grad_ratio,
        "same_update": on.same_update_as_without,
        "disabled_loss_ratio": off.loss_ratio,
    }
    return judged(18, parts, ev, headline)


def check_backoff_in_step() -> Checked:
    """Claim: scaler.step() finds the inf, skips the update and lowers the scale. Parts: step() leaves the
    parameters alone; step() lowers the scale. The scale after update() is measured beside them."""
    s = scaler_step(enabled=True, plant_inf=True)
    parts = [Part("step_skips", not s.params_changed_in_step), Part("step_lowers_scale", s.scale_after_step < s.scale)]
    headline = {"scale": s.scale, "after_step": s.scale_after_step, "after_update": s.scale_after_update}
    return judged(19, parts, s, headline)


# ── the defaults a tutorial quotes (claim 29) ───────────────────────────────────────────────────────────────
QUOTED_DEFAULTS = ScalerSettings(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000)


@dataclass(frozen=True)
class DefaultsEvidence:
    read: ScalerSettings  # from a fresh torch.amp.GradScaler("cpu")
    quoted: ScalerSettings  # as the tutorial writes them


def check_scaler_defaults() -> Checked:
    """Claim: GradScaler starts at 65536, doubles the scale after 2000 steps without inf/NaN and halves it on one.
    A part per setting: the value read from a real GradScaler equals the quoted one."""
    ev = DefaultsEvidence(ScalerSettings.defaults("cpu"), QUOTED_DEFAULTS)
    fields = ("init_scale", "growth_factor", "growth_interval", "backoff_factor")
    parts = [Part("equals", getattr(ev.read, f) == getattr(ev.quoted, f), subject=f) for f in fields]
    return judged(29, parts, ev, {f: getattr(ev.read, f) for f in fields})


# ── scaling the loss under bf16 (claim 35) ──────────────────────────────────────────────────────────────────
BF16_LOSS_SCALE = 1024.0  # the tutorial's example factor


@dataclass(frozen=True)
class Bf16ScalingEvidence:
    scale: float
    elements: int  # gradient elements compared (those whose exact value is non-zero)
    identical: int  # elements whose unscaled gradient equals the unscaled run's, bit for bit
    error_plain: float  # median relative error against the exact (float64) gradient, without scaling
    error_scaled: float  # … with the loss × scale and the gradients ÷ scale


def check_bf16_scaling_keeps_bits() -> Checked:
    """Claim: under bf16, multiplying the loss by a scale (e.g. 1024) lets tiny gradients keep more significant
    bits. Part: the bf16-autocast gradients, scaled and divided back, are closer to the exact (float64) gradient
    than the unscaled ones (median relative error over elements whose exact value is non-zero)."""
    exact = _first_step_grads(None, SMALL_BLOCK, 1.0)
    plain = _first_step_grads("bf16", SMALL_BLOCK, 1.0)
    scaled = {n: g / BF16_LOSS_SCALE for n, g in _first_step_grads("bf16", SMALL_BLOCK, BF16_LOSS_SCALE).items()}
    floor = EXACT_ZERO_BELOW * max(g.abs().max().item() for g in exact.values())
    keep = {n: g.abs() > floor for n, g in exact.items()}

    def error(grads: dict[str, torch.Tensor]) -> float:
        rel = [((grads[n].double() - exact[n]) / exact[n]).abs()[k] for n, k in keep.items()]
        return torch.cat(rel).median().item()

    identical = sum(int((plain[n] == scaled[n])[k].sum()) for n, k in keep.items())
    ev = Bf16ScalingEvidence(
        BF16_LOSS_SCALE, sum(int(k.sum()) for k in keep.values()), identical, error(plain), error(scaled)
    )
    parts = [Part("closer_to_exact", ev.error_scaled < ev.error_plain)]
    headline = {"identical": ev.identical, "elements": ev.elements, "error_plain": ev.error_plain}
    return judged(35, parts, ev, headline | {"error_scaled": ev.error_scaled})


# ── who casts an activation back to bf16 (claim 36) ─────────────────────────────────────────────────────────
SCALED = ("float32", "bfloat16")  # dtypes of the tensors handed to scale()


@dataclass(frozen=True)
class CastBackEvidence:
    matmul: tuple[OpRow, ...]  # matmul(float32 probs, bf16 V) under bf16 autocast, no GradScaler anywhere; per device
    scaled_dtypes: dict[str, str]  # dtype of a tensor → dtype GradScaler("cpu").scale() returns for it
    next_layer: tuple[OpRow, ...] = ()  # the next matmul (a float32 input, as if the output were float32), per device


def check_scaler_casts_back_to_bf16() -> Checked:
    """Claim: casting the float32 × bf16 matmul's output back to bf16 for the next layer is the job of GradScaler
    and the operations that follow. Parts: without any GradScaler the output is not bf16 already (per device);
    GradScaler's scale() turns a float32 tensor into bf16; the next layer's op under autocast takes a float32
    input to bf16 (per device)."""
    rows = tuple(measure_row(OpCall("matmul", ("float32", AUTOCAST_DTYPE), LOW), d) for d in DEVICES)
    following = tuple(measure_row(OpCall("matmul", ("float32", "float32"), LOW), d) for d in DEVICES)
    scaler = torch.amp.GradScaler("cpu")
    scaled = {name: dtype_name(scaler.scale(torch.ones(2, dtype=getattr(torch, name))).dtype) for name in SCALED}
    ev = CastBackEvidence(rows, scaled, following)
    parts = [Part("needs_scaler", r.returned != AUTOCAST_DTYPE, subject=r.device) for r in rows]
    parts.append(Part("scale_casts", scaled["float32"] == AUTOCAST_DTYPE))
    parts += [Part("next_op_casts", r.returned == AUTOCAST_DTYPE, subject=r.device) for r in following]
    headline: dict[str, object] = {f"{r.device}_matmul_out": r.returned for r in rows}
    headline |= {f"{r.device}_next_out": r.returned for r in following}
    return judged(36, parts, ev, headline | {f"scale_{k}": v for k, v in scaled.items()})


# ── does the scale follow the gradients' size? (claim 48) ───────────────────────────────────────────────────
SIZE_GRADIENTS = {"large": 1e3, "small": 1e-7}  # finite gradients, far apart in size
SIZE_GROWTH_INTERVAL = 4  # a short growth interval, so growth shows within a few steps (default: 2000)
SIZE_STEPS = 2 * SIZE_GROWTH_INTERVAL


@dataclass(frozen=True)
class ScaleTrack:
    gradient: float  # every gradient element, unscaled
    scales: tuple[float, ...]  # get_scale() before the first step, then after each update()


@dataclass(frozen=True)
class ScaleSizeEvidence:
    growth_interval: int
    default_growth_interval: int  # read from a fresh GradScaler("cpu")
    tracks: dict[str, ScaleTrack]  # "large" | "small" → the scale over SIZE_STEPS steps
    overflow: ScaleTrack  # the same with an inf gradient: what backs the scale off


def _track(gradient: float) -> ScaleTrack:
    """SIZE_STEPS steps of a one-parameter model whose unscaled gradient is `gradient`, through a real scaler."""
    p = torch.zeros(4, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.0)
    scaler = torch.amp.GradScaler("cpu", growth_interval=SIZE_GROWTH_INTERVAL)
    scales = [scaler.get_scale()]
    for _ in range(SIZE_STEPS):
        opt.zero_grad()
        scaler.scale((p * gradient).sum()).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return ScaleTrack(gradient, tuple(scales))


def check_scale_follows_gradient_size() -> Checked:
    """Claim: early in training gradients are large and the scale drops; later they are small and it grows.
    Parts: with large finite gradients the scale drops; with small gradients it grows more than with large ones.
    A real GradScaler, with a short growth interval so growth shows in a few steps; an inf gradient is tracked
    beside them (what does lower the scale)."""
    tracks = {name: _track(g) for name, g in SIZE_GRADIENTS.items()}
    ev = ScaleSizeEvidence(
        SIZE_GROWTH_INTERVAL,
        torch.amp.GradScaler("cpu").get_growth_interval(),
        tracks,
        _track(float("inf")),
    )
    large, small = tracks["large"].scales, tracks["small"].scales
    parts = [
        Part("large_lowers", min(large) < large[0]),
        Part("small_raises", small[-1] > large[-1]),
    ]
    headline = {f"{name}_final_scale": t.scales[-1] for name, t in tracks.items()}
    return judged(48, parts, ev, headline | {"overflow_final_scale": ev.overflow.scales[-1]})
