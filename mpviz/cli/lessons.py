"""`lessons`: the app's lessons and the commands that print their measurements."""

from __future__ import annotations

from mpviz.app import lessons
from mpviz.cli.output import out, print_table
from mpviz.serialize import dumps


def _page(entry: lessons.Lesson) -> str:
    """The lesson's page script as a path inside the package (mpviz/pages/<slug>.py), wherever it is installed."""
    return f"mpviz/pages/{entry.page.name}"


# ── lessons ───────────────────────────────────────────────────────────────────────────────────────────────
def _add_lessons(sub) -> None:
    p = sub.add_parser("lessons", help="the app's lessons (pages) and the commands that print their measurements")
    p.add_argument("--json", action="store_true")


def _run_lessons(args) -> None:
    if args.json:
        out(dumps({"lessons": [{"slug": e.slug, "page": _page(e), "commands": e.commands} for e in lessons.LESSONS]}))
        return
    print_table(
        [[e.slug, _page(e), " ".join(e.commands) or "-"] for e in lessons.LESSONS], ["lesson", "page", "commands"]
    )


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "lessons": (_add_lessons, _run_lessons),
}
