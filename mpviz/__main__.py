"""Command line: python -m mpviz <trace|policy|bits|softmax|scaler|recipes|claims|bench> [--json].

Each subcommand has one `_add_<name>(subparsers)` that declares its arguments and one `_run_<name>(args)` that
prints. Bad arguments and configs outside mpviz's limits exit with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import replace

from mpviz import claims
from mpviz import softmax as sm
from mpviz.attention import trace_attention
from mpviz.bench import run_bench
from mpviz.formats import encode
from mpviz.model import AttentionConfig, ConfigError
from mpviz.policy import device_policy
from mpviz.scaler import ScalerSettings, TrainConfig, compare_recipes, run
from mpviz.serialize import dumps, to_jsonable


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(2, f"{self.prog}: error: {message}\n")


def _print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


# ── trace ─────────────────────────────────────────────────────────────────────────────────────────────────
def _add_trace(sub) -> None:
    p = sub.add_parser("trace", help="trace the attention block's forward+backward op by op")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="bf16", help="off | fp16 | bf16 | float16 | bfloat16")
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=32)
    p.add_argument("--attention", default="manual", help="manual | sdpa")
    p.add_argument("--softmax", default="torch", help="torch | naive")
    p.add_argument("--input-scale", type=float, default=1.0)
    p.add_argument("--no-causal", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")


def _run_trace(args) -> None:

    cfg = AttentionConfig(
        seq_len=args.seq,
        d_model=args.dim,
        n_heads=args.heads,
        vocab=args.vocab,
        causal=not args.no_causal,
        attention=args.attention,
        softmax=args.softmax,
        input_scale=args.input_scale,
        seed=args.seed,
    )
    result = trace_attention(cfg, device=args.device, dtype=args.dtype)
    t = result.trace
    if args.json:
        print(
            dumps(
                {
                    "config": cfg.to_dict(),
                    "device": result.device,
                    "autocast_dtype": result.autocast_dtype,
                    "events": t.events,
                    "landmarks": t.landmarks,
                    "reference_error": result.reference_error,
                }
            )
        )
        return
    rows = []
    for e in t.events:
        ins = ",".join(i.dtype for i in e.inputs) or "-"
        outs = ",".join(o.dtype for o in e.outputs) or "-"
        rows.append(
            [
                e.index,
                e.phase,
                e.module or "(model)",
                e.op,
                f"{ins} -> {outs}",
                "cast" if e.autocast_cast else "",
                e.landmark or "",
            ]
        )
    _print_table(rows, ["#", "phase", "module", "op", "dtypes", "autocast", "landmark"])
    bad = t.first_nonfinite()
    print(
        f"\n{len(t.events)} ops, {sum(e.autocast_cast for e in t.events)} autocast casts"
        + (f"; first inf/nan at #{bad.index} ({bad.op})" if bad else "; no inf/nan created")
    )


# ── bench ─────────────────────────────────────────────────────────────────────────────────────────────────
def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="time forward+backward traced vs untraced")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", action="store_true")


def _run_bench(args) -> None:

    rows = run_bench(repeat=args.repeat)
    if args.json:
        print(dumps({"results": rows}))
        return
    _print_table(
        [
            [
                r.name,
                r.dtype,
                f"{r.untraced_ms:.1f}",
                f"{r.traced_ms:.1f}",
                f"{r.full_ms:.1f}",
                f"{r.ratio:.1f}x",
                r.events,
            ]
            for r in rows
        ],
        ["config", "autocast", "untraced ms", "traced ms", "trace+ref ms", "ratio", "events"],
    )


# ── scaler and recipes (issue 6) ──────────────────────────────────────────────────────────────────────────
def _step_list(raw: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(s) for s in raw.split(",") if s.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated step numbers, got {raw!r}") from None


def _add_train_args(p) -> None:
    p.add_argument("--device", default="cpu", help="cpu | cuda | cuda-sim")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--loss-scale-multiplier", type=float, default=1.0, help="< 1 shrinks gradients")
    p.add_argument("--clip", type=float, default=None, help="max gradient norm (unscale_ runs first)")
    p.add_argument("--accum", type=int, default=1, help="micro-batches per optimizer step")
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")


def _train_config(args, **changes):

    model = AttentionConfig(seq_len=args.seq, d_model=args.dim, n_heads=args.heads, seed=args.seed)
    return TrainConfig(
        model=model,
        device=args.device,
        steps=args.steps,
        loss_multiplier=args.loss_scale_multiplier,
        clip=args.clip,
        accum=args.accum,
        lr=args.lr,
        **changes,
    )


def _add_scaler(sub) -> None:
    p = sub.add_parser("scaler", help="train with a real GradScaler and print its state step by step")
    _add_train_args(p)
    p.add_argument("--dtype", default="fp16", help="off | fp16 | bf16")
    p.add_argument("--no-scaler", action="store_true", help="train without a GradScaler")
    p.add_argument("--init-scale", type=float, default=None, help="default: a fresh GradScaler's")
    p.add_argument("--growth-factor", type=float, default=None)
    p.add_argument("--backoff-factor", type=float, default=None)
    p.add_argument("--growth-interval", type=int, default=None)
    p.add_argument("--inject-inf", type=_step_list, default=(), help="steps to get an inf gradient: 10,30")


def _run_scaler(args) -> None:

    defaults = ScalerSettings.defaults(args.device)
    given = {
        "init_scale": args.init_scale,
        "growth_factor": args.growth_factor,
        "backoff_factor": args.backoff_factor,
        "growth_interval": args.growth_interval,
    }
    settings = replace(defaults, **{k: v for k, v in given.items() if v is not None})
    settings = None if args.no_scaler else settings
    result = run(_train_config(args, dtype=args.dtype, scaler=settings, inject_inf=args.inject_inf))
    if args.json:
        print(dumps({"defaults": result.defaults, "config": result.config, "steps": result.steps}))
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
    _print_table(
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
    print(f"\nfresh GradScaler defaults: {result.defaults}; skipped steps: {skipped}")


def _add_recipes(sub) -> None:
    p = sub.add_parser("recipes", help="fp32, bf16, fp16+GradScaler and fp16 alone on the same seed and data")
    _add_train_args(p)


def _run_recipes(args) -> None:

    base = _train_config(args)
    results = compare_recipes(base)
    if args.json:
        rows = [{**to_jsonable(r), "final_loss": r.final_loss} for r in results]
        print(dumps({"config": base, "recipes": rows}))
        return
    _print_table(
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


# ── bits (issue 4) ─────────────────────────────────────────────────────────────────────────────────────────
# VALUE may start with "-" ("-0", "-inf", "-1e-7"): such words are values, not options, for this subcommand.
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def _add_bits(sub) -> None:
    p = sub.add_parser("bits", help="store one value in a number format and show its bits")
    p.add_argument("value", metavar="VALUE", help="1e-7, -0, inf, nan, 0x3c00 (a bit pattern), fp16:0x3c00")
    p.add_argument("--format", required=True, help="fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 … or a torch name")
    p.add_argument("--rounding", default="nearest", choices=["nearest", "zero", "up", "down"])
    p.add_argument("--json", action="store_true")
    p._negative_number_matcher = _NEGATIVE_VALUE  # argparse's own hook for "negative numbers are positionals"


def _run_bits(args) -> None:

    e = encode(args.value, args.format, args.rounding)
    if args.json:
        print(dumps(e.to_dict()))
        return
    flags = [name for name in ("overflow", "underflow", "saturated", "invalid") if getattr(e, name)]
    unbiased = "-" if e.exponent_unbiased is None else e.exponent_unbiased
    sign = e.bits[: len(e.bits) - len(e.exponent_bits) - len(e.mantissa)]  # "" in an unsigned format
    rows = [
        ["format", f"{e.format}  (rounding: {e.rounding})"],
        ["input", e.input],
        ["value", f"{e.value!r}  ({e.cls})"],
        ["bits", f"{' '.join(f for f in (sign, e.exponent_bits, e.mantissa) if f)}  ({e.hex})"],
        ["sign", str(e.sign)],
        ["exponent", f"{e.exponent_bits}  raw {e.exponent_raw}, unbiased {unbiased}"],
        ["mantissa", e.mantissa],
        ["error", f"abs {e.abs_error:.6g}, rel {e.rel_error:.6g}"],
        ["ulp", f"{e.ulp:.6g}"],
        ["next down/up", " / ".join("-" if v is None else repr(v) for v in (e.next_down, e.next_up))],
        ["flags", ", ".join(flags) or "-"],
    ]
    width = max(len(r[0]) for r in rows)
    for name, text in rows:
        print(f"{name.ljust(width)}  {text}")


# ── softmax (issue 5) ─────────────────────────────────────────────────────────────────────────────────────
def _add_softmax(sub) -> None:
    p = sub.add_parser("softmax", help="softmax recipes in fp32/fp16/bf16/e4m3 against float64")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--logits", help='comma-separated, e.g. "10,10.01,3" or --logits=-5,3 (-inf = masked)')
    src.add_argument("--scenario", help="large | close | peak | flat | long | trace")
    p.add_argument("--dtype", default="all", help="all | fp32 | fp16 | bf16 | e4m3")
    p.add_argument("--method", default="all", help="all | naive | stable | torch | upcast")
    p.add_argument("--loss", default="dot", help="loss for the backward: dot (Σ v·p) | nll (−log p[argmax])")
    p.add_argument("--head", type=int, default=0, help="--scenario trace: head of the scores")
    p.add_argument("--row", type=int, default=-1, help="--scenario trace: query row (negative: from the end)")
    p.add_argument("--json", action="store_true")
    p._negative_number_matcher = _NEGATIVE_VALUE  # "-5,3" and "-inf,0" are values, not options


def _softmax_row(args) -> tuple[tuple[float, ...], dict]:
    """The logits the arguments ask for, and where they came from."""

    if args.logits is not None:
        return sm.parse_logits(args.logits), {"logits": args.logits}
    if not sm.scenario(args.scenario).from_trace:
        return sm.scenario_logits(args.scenario), {"scenario": args.scenario}

    cfg = AttentionConfig()
    row = sm.score_row(trace_attention(cfg, "cpu", "bf16").trace, args.head, args.row)
    return row.values, {
        "scenario": "trace",
        "config": cfg.to_dict(),
        "autocast": "bf16",
        "head": row.head,
        "row": row.row,
        "scores_dtype": row.dtype,
        "full_length": row.full_length,
    }


def _run_softmax(args) -> None:

    formats = sm.FORMAT_NAMES if args.dtype == "all" else (sm.parse_format(args.dtype).name,)
    methods = sm.METHODS if args.method == "all" else (args.method,)
    logits, source = _softmax_row(args)
    c = sm.compare(logits, formats, methods, args.loss)
    quantized = sm.quantize_probs(c.reference)
    if args.json:
        print(
            dumps(
                {
                    "source": source,
                    **{
                        f: getattr(c, f)
                        for f in ("logits", "loss", "reference", "reference_grad", "thresholds", "variants")
                    },
                    "quantized_reference": quantized,
                }
            )
        )
        return

    def short(values) -> str:
        head = ", ".join(f"{v:.6g}" for v in values[:8])
        return head + (f", … ({len(values)} values)" if len(values) > 8 else "")

    print(f"logits: {short(c.logits)}")
    for t in c.thresholds:
        print(
            f"{t.dtype}: exp(x) = inf from x = {t.overflow_from:.8g} (ln max = {t.log_max:.8g}), "
            f"= 0 from x = {t.underflow_from:.8g}"
        )
    print()
    header = "format|method|output|nan|inf|zeroed|sum-1|max abs|max rel|KL|argmax|order lost|grad rel|grad bad"
    rows = []
    for v in c.variants:
        m, g = v.metrics, v.grad
        errors = [f"{e:.2e}" for e in (m.sum_error, m.max_abs_error, m.max_rel_error, m.kl)]
        argmax = "changed" if m.argmax_changed else "same"
        row = [v.format, v.method, v.output_dtype, m.nan, m.inf, m.underflow, *errors, argmax, m.order_lost]
        rows.append([*row, f"{g.max_rel_error:.2e}", g.nan + g.inf])
    _print_table(rows, header.split("|"))
    print(f"\nfloat64{'':17}{short(c.reference)}")
    for v in c.variants:
        print(f"{v.format:14} {v.method:8} {short(v.probs)}")
    print("\nprobabilities in 8 bits (float64 probabilities quantised):")
    for q in quantized:
        m = q.metrics
        print(
            f"  {q.scheme:6}  max abs {m.max_abs_error:.2e}  max rel {m.max_rel_error:.2e}  "
            f"zeroed {m.underflow}  (smallest non-zero {q.smallest_nonzero:.3g})"
        )


# ── policy (issue 3) ──────────────────────────────────────────────────────────────────────────────────────
def _add_policy(sub) -> None:
    p = sub.add_parser("policy", help="autocast's op categories on a device, probed from the installed torch")
    p.add_argument("--device", default="cpu", help="cpu | cuda (| xpu | mps | mtia where the build has them)")
    p.add_argument("--json", action="store_true")


def _run_policy(args) -> None:

    policy = device_policy(args.device)  # ValueError (exit 2) for a device without a probeable policy
    if args.json:
        print(
            dumps(
                {
                    "device": policy.device,
                    "torch": policy.torch_version,
                    "autocast_dtype": policy.autocast_dtype,
                    "categories": policy.categories,
                    "counts": policy.counts(),
                }
            )
        )
        return
    _print_table([[op, cat] for cat, ops in policy.categories.items() for op in ops], ["op", "category"])
    counts = ", ".join(f"{cat} {n}" for cat, n in policy.counts().items())
    print(
        f"\n{policy.device}: {len(policy.ops())} ops ({counts}); torch {policy.torch_version}, "
        f"probed with autocast dtype {policy.autocast_dtype}"
    )


# ── tutorial claims ───────────────────────────────────────────────────────────────────────────────────────
def _add_claims(sub) -> None:
    p = sub.add_parser("claims", help="check the tutorials' claims against this machine's torch, with verdicts")
    p.add_argument("--id", type=int, default=None, help="check one claim (default: all, slow ones included)")
    p.add_argument("--json", action="store_true")


def _headline_text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_headline_text(v) for v in value) + ")"
    return str(value)


def _run_claims(args) -> None:
    chosen = [claims.claim(args.id)] if args.id is not None else list(claims.CLAIMS)  # ConfigError: exit 2
    results = [(c, claims.check(c.id)) for c in chosen]
    if args.json:
        rows = [
            {
                "id": c.id,
                "key": c.key,
                "seeds": c.seeds,
                "on_demand": c.on_demand,
                "verdict": r.verdict,
                "device_verdicts": r.device_verdicts,
                "headline": r.headline,
                "evidence": r.evidence,
            }
            for c, r in results
        ]
        print(dumps({"autocast_dtype": claims.AUTOCAST_DTYPE, "claims": rows}))
        return
    _print_table(
        [
            [
                c.id,
                c.key,
                c.seeds[0],
                r.verdict,
                ", ".join(f"{d}: {v}" for d, v in r.device_verdicts.items()) or "-",
                "; ".join(f"{k}={_headline_text(v)}" for k, v in r.headline.items()),
            ]
            for c, r in results
        ],
        ["id", "claim", "seed", "verdict", "per device", "key numbers"],
    )


# ── registry: name → (declare arguments, run) ─────────────────────────────────────────────────────────────
COMMANDS: dict[str, tuple[Callable, Callable]] = {
    "policy": (_add_policy, _run_policy),
    "trace": (_add_trace, _run_trace),
    "bench": (_add_bench, _run_bench),
    "bits": (_add_bits, _run_bits),
    "softmax": (_add_softmax, _run_softmax),
    "scaler": (_add_scaler, _run_scaler),
    "recipes": (_add_recipes, _run_recipes),
    "claims": (_add_claims, _run_claims),
}


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m mpviz", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add, _ in COMMANDS.values():
        add(sub)
    args = parser.parse_args(argv)
    try:
        COMMANDS[args.command][1](args)
    except (ConfigError, ValueError) as e:
        print(f"python -m mpviz {args.command}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
