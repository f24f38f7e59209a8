"""What the CLI writes: ASCII lines and tables on stdout, one-line errors, and the exit statuses of its contract
(mpviz/__main__.py's docstring)."""

from __future__ import annotations

import sys

PROG = "python -m mpviz"
MAX_MESSAGE = 300  # characters of an error line: a megabyte argument must not become a megabyte of stderr
EXIT_USAGE, EXIT_INTERNAL, EXIT_PIPE = 2, 1, 141


class UsageError(ValueError):
    """Flags that cannot go together, or stdout that cannot be written: exit 2, one line."""


def ascii_text(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii")


def one_line(text: str) -> str:
    line = " ".join(ascii_text(text).split())
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + "..."


def write_stdout(text: str | None = None) -> None:
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


def out(text: str = "") -> None:
    """Write one line of output (ASCII) to stdout."""
    write_stdout(ascii_text(text) + "\n")


def print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths], *rows]:
        out("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
