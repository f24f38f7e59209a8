"""Command line: python -m mpviz <trace|policy|bits|softmax|scaler|recipes|claims|bench|lessons> [--json].

Each subcommand has one `_add_<name>(subparsers)` that declares its arguments (choices and defaults read from
the engine's constants) and one `_run_<name>(args)` that prints. `main(argv)` runs in-process and returns the
exit status. The contract:

- 0: done. With --json, stdout is one strict JSON document (no NaN/Infinity: they are the strings "nan", "inf").
- 2: the arguments or the config are not usable (bad value, out of the engine's limits, conflicting flags), or
  stdout cannot be written: exactly one line on stderr, never a traceback, nothing on stdout.
- 1: something failed inside (a probe's child process died, a bug): one line on stderr; MPVIZ_DEBUG=1 re-raises
  for the traceback.
- 141 (128 + SIGPIPE), silently: the reader went away (`python -m mpviz trace | head -1`), as Unix tools do.

Output is ASCII, the same bytes on every terminal: the CLI's own words are ASCII, JSON escapes non-ASCII as
\\uXXXX, and any other non-ASCII text (a value echoed back) is written as a Python backslash escape. A terminal
set to ASCII (PYTHONIOENCODING=ascii) therefore gets the same output as a UTF-8 one.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
from collections.abc import Callable
from dataclasses import fields, replace

from mpviz import claims, lessons
from mpviz import softmax as sm
from mpviz.attention import available_devices, trace_attention
from mpviz.bench import DEFAULT_REPEAT, page_run, run_bench
from mpviz.bundle import lesson_bundle
from mpviz.formats import ROUNDINGS, SHORT_NAMES, encode
from mpviz.model import (
    ATTENTION_KINDS,
    AUTOCAST_CHOICES,
    SOFTMAX_KINDS,
    AttentionConfig,
    ConfigError,
    parse_autocast_dtype,
)
from mpviz.policy import device_policy
from mpviz.scaler import TRAIN_LIMITS, ScalerSettings, TrainConfig, compare_recipes, run
from mpviz.serialize import dumps, to_jsonable
from mpviz.timing import REPEAT_LIMITS

PROG = "python -m mpviz"
MAX_MESSAGE = 300  # characters of an error line: a megabyte argument must not become a megabyte of stderr
EXIT_USAGE, EXIT_INTERNAL, EXIT_PIPE = 2, 1, 141
_DEFAULT = AttentionConfig()
_TRAIN = TrainConfig()
_TRACE_DEFAULTS = inspect.signature(trace_attention).parameters  # trace_attention's own device/dtype defaults


class UsageError(ValueError):
    """Flags that cannot go together, or stdout that cannot be written: exit 2, one line."""


def _ascii(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii")


def _one_line(text: str) -> str:
    line = " ".join(_ascii(text).split())
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + "..."


def _write_stdout(text: str | None = None) -> None:
    """Write `text` (None: flush) to stdout; a stdout that cannot take it is a UsageError, a gone reader stays a
    BrokenPipeError (handled by `main`)."""
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise UsageError("stdout is closed")
    try:
        if text is None:
            sys.stdout.flush()
        else:
            sys.stdout.write(text)
    except BrokenPipeError:
        raise
    except OSError as e:  # closed underneath us (EBADF), full disk (ENOSPC)
        raise UsageError(f"cannot write output: {e.strerror or e}") from None


def _out(text: str = "") -> None:
    """Write one line of output (ASCII) to stdout."""
    _write_stdout(_ascii(text) + "\n")


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)  # --loss must not silently mean --loss-multiplier
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {_one_line(message)}\n")

    def _print_message(self, message: str, file=None) -> None:  # help and errors: ASCII like everything else
        file = file if file is not None else sys.stderr
        if message and file is not None:
            file.write(_ascii(message))


def _print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths], *rows]:
        _out("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _autocast_spelling(text: str) -> str:
    """argparse type for --dtype: any spelling `parse_autocast_dtype` accepts, kept as given."""
    try:
        parse_autocast_dtype(text)
    except ConfigError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an autocast dtype ({' | '.join(AUTOCAST_CHOICES)})"
        ) from None
    return text


def _choices(values) -> str:
    return " | ".join(str(v) for v in values)


# ── trace ─────────────────────────────────────────────────────────────────────────────────────────────────
def _add_trace(sub) -> None:
    p = sub.add_parser("trace", help="trace the attention block's forward+backward op by op")
    p.add_argument("--device", default=_TRACE_DEFAULTS["device"].default, help=_choices(available_devices()))
    p.add_argument(
        "--dtype", type=_autocast_spelling, default=_TRACE_DEFAULTS["dtype"].default, help=_choices(AUTOCAST_CHOICES)
    )
    _add_model_args(p, vocab=True)
    p.add_argument("--attention", default=_DEFAULT.attention, choices=ATTENTION_KINDS)
    p.add_argument("--softmax", default=_DEFAULT.softmax, choices=SOFTMAX_KINDS)
    p.add_argument("--input-scale", type=float, default=_DEFAULT.input_scale)
    p.add_argument("--no-causal", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--bundle",
        action="store_true",
        help="print the lesson bundle the browser lesson shows (JSON, see mpviz.bundle; implies --json)",
    )


def _add_model_args(p, vocab: bool = False, base: AttentionConfig = _DEFAULT) -> None:
    """--seq --dim --heads (--vocab) --seed, defaulting to `base`'s values."""
    p.add_argument("--seq", type=int, default=base.seq_len)
    p.add_argument("--dim", type=int, default=base.d_model)
    p.add_argument("--heads", type=int, default=base.n_heads)
    if vocab:
        p.add_argument("--vocab", type=int, default=base.vocab)
    p.add_argument("--seed", type=int, default=base.seed)


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
    if args.bundle:
        _out(lesson_bundle(cfg, device=args.device, dtype=args.dtype).to_json())
        return
    result = trace_attention(cfg, device=args.device, dtype=args.dtype)
    t = result.trace
    if args.json:
        _out(
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
    _out()
    _out(
        f"{len(t.events)} ops, {sum(e.autocast_cast for e in t.events)} autocast casts"
        + (f"; first inf/nan at #{bad.index} ({bad.op})" if bad else "; no inf/nan created")
    )


# ── bench ─────────────────────────────────────────────────────────────────────────────────────────────────
def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="time forward+backward traced vs untraced")
    lim = REPEAT_LIMITS
    p.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help=f"{lim.min_repeat}..{lim.max_repeat}")
    p.add_argument("--json", action="store_true")


def _run_bench(args) -> None:
    rows = run_bench(repeat=args.repeat)  # ConfigError (exit 2) for a repeat outside the limits, before any work
    page = page_run()
    if args.json:
        _out(dumps({"results": rows, "page_run": page}))
        return
    _print_table(
        [
            [
                r.name,
                r.dtype,
                f"{r.untraced_ms:.1f}",
                f"{r.traced_ms:.1f}",
                f"{r.stats_us_per_output:.0f}",
                f"{r.full_ms:.1f}",
                f"{r.lesson_ms:.1f}",
                f"{r.bundle_bytes / 1024:.0f}",
                r.events,
                f"{r.relative_spread:.0%}",
            ]
            for r in rows
        ],
        [
            "config",
            "autocast",
            "untraced ms",
            "traced ms",
            "stats us/output",
            "trace+ref ms",
            "lesson ms",
            "bundle KiB",
            "events",
            "spread (IQR/median)",
        ],
    )
    if page is not None:
        _out()
        _out(
            f"a class on one link (?{page.query}, results cached): {page.sessions} fresh sessions at once, "
            f"server CPU {page.cpu_ms_per_session:.1f} ms per session, until complete p50 {page.p50_s:.2f} s, "
            f"p95 {page.p95_s:.2f} s, all in {page.wall_s:.1f} s" + ("" if page.ok else " (some sessions failed)")
        )


# ── scaler and recipes ────────────────────────────────────────────────────────────────────────────────────
def _step_list(raw: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(s) for s in raw.split(",") if s.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated step numbers, got {raw!r}") from None


def _add_train_args(p) -> None:
    lim = TRAIN_LIMITS
    p.add_argument("--device", default=_TRAIN.device, help=_choices(available_devices()))
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
    _add_model_args(p, base=_TRAIN.model)
    p.add_argument("--json", action="store_true")


def _train_config(args, **changes) -> TrainConfig:
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
    p.add_argument("--dtype", type=_autocast_spelling, default=_TRAIN.dtype, help=_choices(AUTOCAST_CHOICES))
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
    result = run(_train_config(args, dtype=args.dtype, scaler=settings, inject_inf=args.inject_inf))
    if args.json:
        _out(dumps({"defaults": result.defaults, "config": result.config, "steps": result.steps}))
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
    _out()
    _out(f"fresh GradScaler defaults: {result.defaults}; skipped steps: {skipped}")


def _add_recipes(sub) -> None:
    p = sub.add_parser("recipes", help="fp32, bf16, fp16+GradScaler and fp16 alone on the same seed and data")
    _add_train_args(p)


def _run_recipes(args) -> None:
    base = _train_config(args)
    results = compare_recipes(base)
    if args.json:
        rows = [{**to_jsonable(r), "final_loss": r.final_loss} for r in results]
        _out(dumps({"config": base, "recipes": rows}))
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


# ── bits ──────────────────────────────────────────────────────────────────────────────────────────────────
# VALUE may start with "-" ("-0", "-inf", "-1e-7"): such words are values, not options, for this subcommand.
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def _add_bits(sub) -> None:
    p = sub.add_parser("bits", help="store one value in a number format and show its bits")
    p.add_argument("value", metavar="VALUE", help="1e-7, -0, inf, nan, 0x3c00 (a bit pattern), fp16:0x3c00")
    p.add_argument("--format", required=True, help=f"{' '.join(SHORT_NAMES.values())} or a torch name")
    p.add_argument("--rounding", default=ROUNDINGS[0], choices=ROUNDINGS)
    p.add_argument("--json", action="store_true")
    p._negative_number_matcher = _NEGATIVE_VALUE  # argparse's own hook for "negative numbers are positionals"


def _run_bits(args) -> None:
    e = encode(args.value, args.format, args.rounding)
    if args.json:
        _out(dumps(e.to_dict()))
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
        _out(f"{name.ljust(width)}  {text}")


# ── softmax ───────────────────────────────────────────────────────────────────────────────────────────────
def _add_softmax(sub) -> None:
    p = sub.add_parser("softmax", help="softmax recipes in fp32/fp16/bf16/e4m3 against float64")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--logits", help='comma-separated, e.g. "10,10.01,3" or --logits=-5,3 (-inf = masked)')
    src.add_argument("--scenario", choices=sm.SCENARIO_NAMES)
    short = [SHORT_NAMES[n] for n in sm.FORMAT_NAMES]
    p.add_argument("--dtype", default="all", help=_choices(["all", *short]))
    p.add_argument("--method", default="all", choices=("all", *sm.METHODS))
    p.add_argument("--loss", default=sm.LOSSES[0], choices=sm.LOSSES, help="dot: sum v*p; nll: -log p[argmax]")
    p.add_argument("--head", type=int, default=None, help="--scenario trace only: head of the scores (default 0)")
    p.add_argument("--row", type=int, default=None, help="--scenario trace only: query row (negative: from the end)")
    p.add_argument("--json", action="store_true")
    p._negative_number_matcher = _NEGATIVE_VALUE  # "-5,3" and "-inf,0" are values, not options


TRACE_SCENARIO_CONFIG = AttentionConfig()  # the block `--scenario trace` takes its score row from


def _softmax_row(args) -> tuple[tuple[float, ...], dict]:
    """The logits the arguments ask for, and where they came from."""
    from_trace = args.scenario is not None and sm.scenario(args.scenario).from_trace
    if not from_trace and (args.head is not None or args.row is not None):
        raise UsageError("--head and --row pick a row of a traced run: use them with --scenario trace")
    if args.logits is not None:
        return sm.parse_logits(args.logits), {"logits": args.logits}
    if not from_trace:
        return sm.scenario_logits(args.scenario), {"scenario": args.scenario}

    cfg = TRACE_SCENARIO_CONFIG
    head, row = args.head or 0, -1 if args.row is None else args.row
    if not 0 <= head < cfg.n_heads:  # checked before the trace: it cannot be in the sample
        raise ConfigError("head", head, (0, cfg.n_heads - 1), "out of range")
    if not -cfg.seq_len <= row < cfg.seq_len:
        raise ConfigError("row", row, (-cfg.seq_len, cfg.seq_len - 1), "out of range")
    picked = sm.score_row(trace_attention(cfg, "cpu", "bf16").trace, head, row)
    return picked.values, {
        "scenario": "trace",
        "config": cfg.to_dict(),
        "autocast": "bf16",
        "head": picked.head,
        "row": picked.row,
        "scores_dtype": picked.dtype,
        "full_length": picked.full_length,
    }


def _run_softmax(args) -> None:
    formats = sm.FORMAT_NAMES if args.dtype == "all" else (sm.parse_format(args.dtype).name,)
    methods = sm.METHODS if args.method == "all" else (args.method,)
    logits, source = _softmax_row(args)
    c = sm.compare(logits, formats, methods, args.loss)
    quantized = sm.quantize_probs(c.reference)
    if args.json:
        _out(
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
        return head + (f", ... ({len(values)} values)" if len(values) > 8 else "")

    _out(f"logits: {short(c.logits)}")
    for t in c.thresholds:
        _out(
            f"{t.dtype}: exp(x) = inf from x = {t.overflow_from:.8g} (ln max = {t.log_max:.8g}), "
            f"= 0 from x = {t.underflow_from:.8g}"
        )
    _out()
    header = "format|method|output|nan|inf|zeroed|sum-1|max abs|max rel|KL|argmax|order lost|grad rel|grad bad"
    rows = []
    for v in c.variants:
        m, g = v.metrics, v.grad
        errors = [f"{e:.2e}" for e in (m.sum_error, m.max_abs_error, m.max_rel_error, m.kl)]
        argmax = "changed" if m.argmax_changed else "same"
        row = [v.format, v.method, v.output_dtype, m.nan, m.inf, m.underflow, *errors, argmax, m.order_lost]
        rows.append([*row, f"{g.max_rel_error:.2e}", g.nan + g.inf])
    _print_table(rows, header.split("|"))
    _out()
    _out(f"float64{'':17}{short(c.reference)}")
    for v in c.variants:
        _out(f"{v.format:14} {v.method:8} {short(v.probs)}")
    _out()
    _out("probabilities in 8 bits (float64 probabilities quantised):")
    for q in quantized:
        m = q.metrics
        _out(
            f"  {q.scheme:6}  max abs {m.max_abs_error:.2e}  max rel {m.max_rel_error:.2e}  "
            f"zeroed {m.underflow}  (smallest non-zero {q.smallest_nonzero:.3g})"
        )


# ── policy ────────────────────────────────────────────────────────────────────────────────────────────────
def _add_policy(sub) -> None:
    p = sub.add_parser("policy", help="autocast's op categories on a device, probed from the installed torch")
    p.add_argument("--device", default="cpu", help="cpu | cuda (| xpu | mps | mtia where the build has them)")
    p.add_argument("--json", action="store_true")


def _run_policy(args) -> None:
    policy = device_policy(args.device)  # ValueError (exit 2) for a device without a probeable policy
    if args.json:
        _out(
            dumps(
                {
                    "device": policy.device,
                    "torch": policy.torch_version,
                    "autocast_dtype": policy.autocast_dtype,
                    "categories": policy.categories,
                    "counts": policy.counts(),
                    "notes": policy.notes,
                    "probe_errors": policy.probe_errors,
                    "fixed_cast_dtype": policy.fixed_cast_dtype,
                }
            )
        )
        return
    rows = [[op, cat, ", ".join(policy.notes.get(op, ()))] for cat, ops in policy.categories.items() for op in ops]
    _print_table(rows, ["op", "category", "notes"])
    counts = ", ".join(f"{cat} {n}" for cat, n in policy.counts().items())
    _out()
    _out(
        f"{policy.device}: {len(policy.ops())} ops ({counts}); torch {policy.torch_version}, "
        f"probed with autocast dtype {policy.autocast_dtype}"
    )


# ── tutorial claims ───────────────────────────────────────────────────────────────────────────────────────
def _add_claims(sub) -> None:
    p = sub.add_parser("claims", help="check the tutorials' claims against this machine's torch, with verdicts")
    ids = ", ".join(str(c.id) for c in claims.CLAIMS)
    p.add_argument("--id", type=int, default=None, help=f"check one claim ({ids}; default: all, slow ones included)")
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
                "source_titles": [claims.SOURCES[seed] for seed in c.seeds],
                "section": c.section,
                "topic": c.topic,
                "on_demand": c.on_demand,
                "verdict": r.verdict,
                "device_verdicts": r.device_verdicts,
                "parts": r.parts,
                "headline": r.headline,
                "evidence": r.evidence,
            }
            for c, r in results
        ]
        _out(dumps({"autocast_dtype": claims.AUTOCAST_DTYPE, "claims": rows}))
        return
    _print_table(
        [
            [
                c.id,
                c.key,
                claims.SOURCES[c.seeds[0]][1],
                r.verdict,
                ", ".join(f"{d}: {v}" for d, v in r.device_verdicts.items()) or "-",
                "; ".join(f"{k}={_headline_text(v)}" for k, v in r.headline.items()),
            ]
            for c, r in results
        ],
        ["id", "claim", "source", "verdict", "per device", "key numbers"],
    )


# ── lessons ───────────────────────────────────────────────────────────────────────────────────────────────
def _add_lessons(sub) -> None:
    p = sub.add_parser("lessons", help="the app's lessons (pages) and the commands that print their measurements")
    p.add_argument("--json", action="store_true")


def _run_lessons(args) -> None:
    if args.json:
        _out(dumps({"lessons": [{"slug": e.slug, "page": e.page, "commands": e.commands} for e in lessons.LESSONS]}))
        return
    _print_table(
        [[e.slug, e.page, " ".join(e.commands) or "-"] for e in lessons.LESSONS], ["lesson", "page", "commands"]
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
    "lessons": (_add_lessons, _run_lessons),
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add, _ in COMMANDS.values():
        add(sub)
    return parser


def _error(command: str | None, exc: BaseException | str) -> None:
    where = f"{PROG} {command}" if command else PROG
    text = exc if isinstance(exc, str) else str(exc) or type(exc).__name__
    if sys.stderr is not None:
        sys.stderr.write(f"{where}: error: {_one_line(text)}\n")


def _internal(command: str | None, exc: Exception) -> int:
    if os.environ.get("MPVIZ_DEBUG"):
        raise exc
    _error(command, f"internal error: {type(exc).__name__}: {exc} (MPVIZ_DEBUG=1 shows the traceback)")
    return EXIT_INTERNAL


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # in-process (captured) or already gone
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI on `argv` (default: sys.argv[1:]) in this process; return the exit status (see module doc)."""
    command = None
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # argparse: --help (0), or a usage error already written as one line (2)
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        command = args.command
        _write_stdout("")  # fails now, before any work, if stdout is closed
        COMMANDS[command][1](args)
        _write_stdout()  # flush inside the try: a reader that went away shows up here, not at exit
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PIPE
    except (ConfigError, UsageError) as e:
        _error(command, e)
        return EXIT_USAGE
    except ValueError as e:  # engine functions refuse impossible requests with ValueError subclasses
        if not isinstance(e, UnicodeError):  # ASCII output cannot raise one: a bug if it does
            _error(command, e)
            return EXIT_USAGE
        return _internal(command, e)
    except Exception as e:
        return _internal(command, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
