"""Command line: python -m mpviz <trace|policy|bits|softmax|scaler|recipes|bench> [--json].

Each subcommand has one `_add_<name>(subparsers)` that declares its arguments and one `_run_<name>(args)` that
prints. Bad arguments and configs outside mpviz's limits exit with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from mpviz.model import ConfigError


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
    from mpviz.attention import trace_attention
    from mpviz.model import AttentionConfig
    from mpviz.serialize import dumps

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
            [e.index, e.phase, e.module or "(model)", e.op, f"{ins} -> {outs}", "cast" if e.autocast_cast else "",
             e.landmark or ""]
        )
    _print_table(rows, ["#", "phase", "module", "op", "dtypes", "autocast", "landmark"])
    bad = t.first_nonfinite()
    print(f"\n{len(t.events)} ops, {sum(e.autocast_cast for e in t.events)} autocast casts"
          + (f"; first inf/nan at #{bad.index} ({bad.op})" if bad else "; no inf/nan created"))


# ── bench ─────────────────────────────────────────────────────────────────────────────────────────────────
def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="time forward+backward traced vs untraced")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", action="store_true")


def _run_bench(args) -> None:
    from mpviz.bench import run_bench
    from mpviz.serialize import dumps

    rows = run_bench(repeat=args.repeat)
    if args.json:
        print(dumps({"results": rows}))
        return
    _print_table(
        [[r.name, r.dtype, f"{r.untraced_ms:.1f}", f"{r.traced_ms:.1f}", f"{r.full_ms:.1f}", f"{r.ratio:.1f}x",
          r.events] for r in rows],
        ["config", "autocast", "untraced ms", "traced ms", "trace+ref ms", "ratio", "events"],
    )


# ── registry: name → (declare arguments, run) ─────────────────────────────────────────────────────────────
COMMANDS: dict[str, tuple[Callable, Callable]] = {
    "trace": (_add_trace, _run_trace),
    "bench": (_add_bench, _run_bench),
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
