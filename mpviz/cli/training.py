"""Commands that train: `scaler` (a real GradScaler, step by step) and `recipes` (bf16 and fp16, with and
without a scaler)."""

from __future__ import annotations

import argparse
from dataclasses import fields, replace

from mpviz.attention import available_devices
from mpviz.cli.arguments import add_model_args, autocast_spelling, choices_text
from mpviz.cli.output import UsageError, out, print_table
from mpviz.model import AUTOCAST_CHOICES, AttentionConfig
from mpviz.scaler import TRAIN_LIMITS, ScalerSettings, TrainConfig, compare_recipes, run
from mpviz.serialize import dumps, to_jsonable

_TRAIN = TrainConfig()


# ── scaler and recipes ────────────────────────────────────────────────────────────────────────────────────
def _step_list(raw: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(s) for s in raw.split(",") if s.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated step numbers, got {raw!r}") from None


def _add_train_args(p) -> None:
    lim = TRAIN_LIMITS
    p.add_argument("--device", default=_TRAIN.device, help=choices_text(available_devices()))
    p.add_argument("--steps", type=int, default=_TRAIN.steps, help=f"1..{lim.max_steps}")
    p.add_argument(
        "--loss-multiplier",
        type=float,
        default=_TRAIN.loss_multiplier,
        help=f"multiplies the loss before backward; < 1 shrinks gradients ({lim.min_loss_multiplier:g}.."
        f"{lim.max_loss_multiplier:g})",
    )
    # The flag's old name, kept so existing commands keep working; one name per knob is loss_multiplier.
    p.add_argument("--loss-scale-multiplier", type=float, dest="loss_multiplier", help=argparse.SUPPRESS)
    p.add_argument("--clip", type=float, default=_TRAIN.clip, help="max gradient norm (unscale_ runs first)")
    p.add_argument(
        "--accum", type=int, default=_TRAIN.accum, help=f"micro-batches per optimizer step, 1..{lim.max_accum}"
    )
    p.add_argument("--lr", type=float, default=_TRAIN.lr, help=f"{lim.min_lr:g}..{lim.max_lr:g}")
    add_model_args(p, base=_TRAIN.model)
    p.add_argument("--json", action="store_true")


def train_config(args: argparse.Namespace, **changes: object) -> TrainConfig:
    model = AttentionConfig(seq_len=args.seq, d_model=args.dim, n_heads=args.heads, seed=args.seed)
    return TrainConfig(
        model=model,
        device=args.device,
        steps=args.steps,
        loss_multiplier=args.loss_multiplier,
        clip=args.clip,
        accum=args.accum,
        lr=args.lr,
        **changes,
    )


_SCALER_FLAGS = {f.name: "--" + f.name.replace("_", "-") for f in fields(ScalerSettings)}


def _add_scaler(sub) -> None:
    p = sub.add_parser("scaler", help="train with a real GradScaler and print its state step by step")
    _add_train_args(p)
    p.add_argument("--dtype", type=autocast_spelling, default=_TRAIN.dtype, help=choices_text(AUTOCAST_CHOICES))
    p.add_argument("--no-scaler", action="store_true", help="train without a GradScaler")
    for name, flag in _SCALER_FLAGS.items():
        kind = int if name == "growth_interval" else float
        p.add_argument(flag, type=kind, default=None, help="default: a fresh GradScaler's")
    p.add_argument("--inject-inf", type=_step_list, default=(), help="steps to get an inf gradient: 10,30")


def _run_scaler(args) -> None:
    given = {name: getattr(args, name) for name in _SCALER_FLAGS if getattr(args, name) is not None}
    if args.no_scaler and given:
        flags = ", ".join(_SCALER_FLAGS[name] for name in given)
        raise UsageError(f"{flags} set a GradScaler that --no-scaler switches off: drop one")
    settings = None if args.no_scaler else replace(ScalerSettings.defaults(args.device), **given)
    result = run(train_config(args, dtype=args.dtype, scaler=settings, inject_inf=args.inject_inf))
    if args.json:
        out(dumps({"defaults": result.defaults, "config": result.config, "steps": result.steps}))
        return

    def scale(x: float | None) -> str:
        return "-" if x is None else f"{x:g}"

    rows = [
        [
            r.step,
            f"{r.loss:.4f}",
            f"{scale(r.scale_before)} -> {scale(r.scale_after)}",
            "inf" if r.found_inf else "",
            "skipped" if r.skipped else "",
            scale(r.growth_tracker),
            f"{r.grad_norm:.3g}",
            f"{r.zero_grad_fraction:.2%}",
            f"{r.zero_grad_fraction_unscaled:.2%}",
        ]
        for r in result.steps
    ]
    print_table(
        rows,
        [
            "step",
            "loss",
            "scale before -> after",
            "inf found",
            "optimizer step",
            "tracker",
            "grad norm",
            "zero (scaled)",
            "zero (unscaled)",
        ],
    )
    skipped = ", ".join(map(str, result.skipped_steps)) or "none"
    out()
    out(f"fresh GradScaler defaults: {result.defaults}; skipped steps: {skipped}")


def _add_recipes(sub) -> None:
    p = sub.add_parser("recipes", help="fp32, bf16, fp16+GradScaler and fp16 alone on the same seed and data")
    _add_train_args(p)


def _run_recipes(args) -> None:
    base = train_config(args)
    results = compare_recipes(base)
    if args.json:
        rows = [{**to_jsonable(r), "final_loss": r.final_loss} for r in results]
        out(dumps({"config": base, "recipes": rows}))
        return
    print_table(
        [
            [
                r.recipe,
                r.dtype,
                "yes" if r.scaler else "no",
                f"{r.final_loss:.4g}",
                f"{r.mean_zero_grad_fraction:.2%}",
                len(r.skipped_steps),
                len(r.nonfinite_steps),
                "-" if r.diverged_at is None else r.diverged_at,
                f"{r.ms_per_step:.2f}",
                f"{r.memory.backward_peak_bytes / 1024:.1f}",
                f"{r.memory.peak_bytes / 1024:.1f}",
            ]
            for r in results
        ],
        [
            "recipe",
            "autocast",
            "scaler",
            "final loss",
            "lost to zero",
            "skipped",
            "non-finite grads",
            "diverged at",
            "ms/step",
            "fwd+bwd KiB",
            "step KiB",
        ],
    )


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "scaler": (_add_scaler, _run_scaler),
    "recipes": (_add_recipes, _run_recipes),
}
