"""`fp8`: the attention block's projection GEMMs under a low-precision recipe, every quantised tensor measured."""

from __future__ import annotations

from mpviz.cli.arguments import add_model_args
from mpviz.cli.output import out, print_table
from mpviz.fp8.block import MAX_OUTLIER, Fp8Config, run
from mpviz.fp8.recipes import RECIPE_NAMES, RECIPES
from mpviz.model import AttentionConfig
from mpviz.serialize import dumps

_DEFAULT = Fp8Config()


def _add_fp8(sub) -> None:
    p = sub.add_parser("fp8", help="fp8 / MXFP8 / NVFP4 recipes on the attention block's GEMMs, each tensor measured")
    p.add_argument("--recipe", default=_DEFAULT.recipe, choices=RECIPE_NAMES)
    p.add_argument(
        "--outlier",
        type=float,
        default=_DEFAULT.outlier,
        help=f"K: x[0, 0] is multiplied by K (0 < |K| <= {MAX_OUTLIER:g})",
    )
    add_model_args(p, base=_DEFAULT.attention)
    p.add_argument("--json", action="store_true")


def _g(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def _run_fp8(args) -> None:
    attention = AttentionConfig(seq_len=args.seq, d_model=args.dim, n_heads=args.heads, seed=args.seed)
    res = run(Fp8Config(recipe=args.recipe, outlier=args.outlier, attention=attention))  # ConfigError: exit 2
    if args.json:
        doc = {
            "recipe": RECIPES[args.recipe],
            "outlier": args.outlier,
            "attention": attention,
            "tensors": [t.to_dict() for t in res.tensors],
            "gemms": res.gemms,
            "events": len(res.trace.events),
            "trace_seconds": res.trace_seconds,
            "analysis_seconds": res.analysis_seconds,
        }
        out(dumps(doc))
        return
    rec = RECIPES[args.recipe]
    out(f"recipe {rec.name}: {rec.source}")
    out(f"outlier: x[0, 0] x {args.outlier:g}; {len(res.trace.events)} ops traced in {res.trace_seconds:.2f} s")
    print_table(
        [
            [
                t.name,
                t.format,
                _g(t.amax),
                _g(t.scale_of_amax),
                t.scale_bits if len(t.scale_bits) <= 8 else "fp32",
                f"{t.underflow:.2%}",
                f"{t.overflow:.2%}",
                _g(t.rel_error),
                f"{_g(t.dynamic_range)}/{_g(t.format_dynamic_range)}",
            ]
            for t in res.tensors
        ],
        [
            "name",
            "format",
            "amax",
            "scale",
            "scale bits",
            "underflow",
            "overflow",
            "rel_error",
            "range (log2)/format's",
        ],
    )
    out()
    print_table(
        [[g.name, g.op + (" (emulated)" if g.emulated else ""), g.a, g.b, _g(g.rel_error)] for g in res.gemms],
        ["gemm", "op", "a", "b", "rel_error vs float64"],
    )


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "fp8": (_add_fp8, _run_fp8),
}
