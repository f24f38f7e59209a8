"""`claims`: each tutorial claim checked against this torch, with its verdict and headline numbers.

Where a claim is made (its sources' titles, the heading in the first one) is words, read from the claims lesson's
locale files (mpviz.presentation.locales, no Streamlit): each as [Chinese, English], the Chinese as the source writes
it.
"""

from __future__ import annotations

from mpviz import claims
from mpviz.cli.output import out, print_table
from mpviz.presentation.locales import load
from mpviz.serialize import dumps

LANGUAGES = ("zh", "en")  # the order of each [title, gloss] pair


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


def _in_both(pick) -> list[str]:
    """[the Chinese words, the English words] that `pick` takes from the claims lesson's locale table."""
    return [pick(load(lang, "claims")) for lang in LANGUAGES]


def _run_claims(args) -> None:
    chosen = [claims.claim(args.id)] if args.id is not None else list(claims.CLAIMS)  # ConfigError: exit 2
    results = [(c, claims.check(c.id)) for c in chosen]
    if args.json:
        rows = [
            {
                "id": c.id,
                "key": c.key,
                "seeds": c.seeds,
                "source_titles": [_in_both(lambda w, seed=seed: w["sources"][seed]) for seed in c.seeds],
                "section": _in_both(lambda w, key=c.key: w["claims"][key]["section"]),
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
        out(dumps({"autocast_dtype": claims.AUTOCAST_DTYPE, "claims": rows}))
        return
    print_table(
        [
            [
                c.id,
                c.key,
                load("en", "claims")["sources"][c.seeds[0]],
                r.verdict,
                ", ".join(f"{d}: {v}" for d, v in r.device_verdicts.items()) or "-",
                "; ".join(f"{k}={_headline_text(v)}" for k, v in r.headline.items()),
            ]
            for c, r in results
        ],
        ["id", "claim", "source", "verdict", "per device", "key numbers"],
    )


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "claims": (_add_claims, _run_claims),
}
