"""`export`: the attention lesson as one offline HTML file (mpviz/presentation/lesson_file.py builds it).

The one command that reaches into the view layer: the file is the stepper with its words, as a page would show it,
so its words come from locales/ through mpviz.presentation.lesson_file (which needs no Streamlit), never from mpviz. The
run's limits are the engine's, as for `trace`: a config outside them is a ConfigError (exit 2) before anything is
written.
"""

from __future__ import annotations

from pathlib import Path

from mpviz.bundle import lesson_bundle
from mpviz.cli.arguments import add_run_args, run_config
from mpviz.cli.output import UsageError, out
from mpviz.presentation.locales import DEFAULT_LANGUAGE, LANGUAGES
from mpviz.serialize import dumps


# ── export ────────────────────────────────────────────────────────────────────────────────────────────────
def _add_export(sub) -> None:
    p = sub.add_parser(
        "export", help="write the attention lesson as one HTML file that works offline (file://, no server)"
    )
    p.add_argument("--out", type=Path, default=Path("lesson.html"), help="the file to write (default: lesson.html)")
    p.add_argument("--lang", default=DEFAULT_LANGUAGE, choices=LANGUAGES, help="the language it opens in")
    add_run_args(p)
    p.add_argument("--json", action="store_true", help="say what was written as JSON")


def _run_export(args) -> None:
    # imported here: the file's colours come from the figures' palette (plotly), which no other command needs, and
    # `python -m mpviz trace` then runs where only the engine's own needs are installed (torch, numpy, ml_dtypes)
    from mpviz.presentation.lesson_file import lesson_html

    bundle = lesson_bundle(run_config(args), device=args.device, dtype=args.dtype)
    page = lesson_html(bundle, args.lang).encode()
    try:
        args.out.write_bytes(page)
    except OSError as e:  # a missing folder, no permission, a full disk: the user's to fix, in one line
        raise UsageError(f"cannot write {args.out}: {e.strerror or e}") from None
    run = bundle.data["run"]
    if args.json:
        written = {"out": str(args.out), "bytes": len(page), "lang": args.lang, "device": run["device"]}
        out(dumps({**written, "autocast_dtype": run["autocast_dtype"], "events": bundle.data["counts"]["events"]}))
        return
    out(
        f"wrote {args.out}: {len(page)} bytes, {bundle.data['counts']['events']} ops on {run['device']}, "
        f"autocast {run['autocast_dtype'] or 'off'}; open it in a browser, no server or network needed"
    )


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "export": (_add_export, _run_export),
}
