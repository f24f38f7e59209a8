"""Commands about single numbers in a format: `bits` (a value's encoding) and `softmax` (a score row in each format)."""

from __future__ import annotations

import re

from mpviz import softmax as sm
from mpviz.attention import trace_attention
from mpviz.cli.arguments import choices_text
from mpviz.cli.output import UsageError, out, print_table
from mpviz.formats import ROUNDINGS, SHORT_NAMES, encode
from mpviz.model import AttentionConfig, ConfigError
from mpviz.serialize import dumps

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
        out(dumps(e.to_dict()))
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
        out(f"{name.ljust(width)}  {text}")


# ── softmax ───────────────────────────────────────────────────────────────────────────────────────────────
def _add_softmax(sub) -> None:
    p = sub.add_parser("softmax", help="softmax recipes in fp32/fp16/bf16/e4m3 against float64")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--logits", help='comma-separated, e.g. "10,10.01,3" or --logits=-5,3 (-inf = masked)')
    src.add_argument("--scenario", choices=sm.SCENARIO_NAMES)
    short = [SHORT_NAMES[n] for n in sm.FORMAT_NAMES]
    p.add_argument("--dtype", default="all", help=choices_text(["all", *short]))
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
        out(
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

    out(f"logits: {short(c.logits)}")
    for t in c.thresholds:
        out(
            f"{t.dtype}: exp(x) = inf from x = {t.overflow_from:.8g} (ln max = {t.log_max:.8g}), "
            f"= 0 from x = {t.underflow_from:.8g}"
        )
    out()
    header = "format|method|output|nan|inf|zeroed|sum-1|max abs|max rel|KL|argmax|order lost|grad rel|grad bad"
    rows = []
    for v in c.variants:
        m, g = v.metrics, v.grad
        errors = [f"{e:.2e}" for e in (m.sum_error, m.max_abs_error, m.max_rel_error, m.kl)]
        argmax = "changed" if m.argmax_changed else "same"
        row = [v.format, v.method, v.output_dtype, m.nan, m.inf, m.underflow, *errors, argmax, m.order_lost]
        rows.append([*row, f"{g.max_rel_error:.2e}", g.nan + g.inf])
    print_table(rows, header.split("|"))
    out()
    out(f"float64{'':17}{short(c.reference)}")
    for v in c.variants:
        out(f"{v.format:14} {v.method:8} {short(v.probs)}")
    out()
    out("probabilities in 8 bits (float64 probabilities quantised):")
    for q in quantized:
        m = q.metrics
        out(
            f"  {q.scheme:6}  max abs {m.max_abs_error:.2e}  max rel {m.max_rel_error:.2e}  "
            f"zeroed {m.underflow}  (smallest non-zero {q.smallest_nonzero:.3g})"
        )


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "bits": (_add_bits, _run_bits),
    "softmax": (_add_softmax, _run_softmax),
}
