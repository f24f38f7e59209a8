"""What the CLI writes: ASCII lines and tables on stdout, one-line errors, and the exit statuses of its contract
(mpviz/__main__.py's docstring)."""

from __future__ import annotations

import array
import os
import stat
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


def _stdout_fd() -> int | None:
    """The file descriptor under sys.stdout, or None where there is none (pytest's capture, a StringIO)."""
    try:
        return sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is out. CPython's buffered stdout may drop an EPIPE: a 283 KB write to a pipe whose
    reader took 10 bytes returns 65536 (a partial write) and nothing is ever retried, so the run ended 0. Writing
    the rest here makes the kernel answer EPIPE (BrokenPipeError) for it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_stdout(text: str | None = None) -> None:
    """Write `text` (None: flush) to stdout; a stdout that cannot take it is a UsageError, a gone reader stays a
    BrokenPipeError (handled by `main`)."""
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise UsageError("stdout is closed")
    try:
        fd = _stdout_fd()
        sys.stdout.flush()  # whatever was written through sys.stdout goes first
        if fd is None:
            if text:
                sys.stdout.write(text)
        elif text:
            _write_all(fd, text.encode(sys.stdout.encoding or "ascii", "backslashreplace"))
    except BrokenPipeError:
        raise
    except OSError as e:  # closed underneath us (EBADF), full disk (ENOSPC)
        raise UsageError(f"cannot write output: {e.strerror or e}") from None


def reader_left() -> bool:
    """Whether stdout is a pipe whose reader went away before reading all of it.

    Output that fits in the pipe's buffer (64 KiB on Linux) is written without error even when the reader then
    reads 10 bytes and leaves (`trace | head -c 10`), so every write succeeded and the run would end 0 or 141 by
    chance. Instead, at the end, while the pipe still holds unread bytes, wait for the reader: it reads them (False)
    or closes its end (True: the poll reports POLLERR). A reader that keeps reading (`| less`, `| cat`) sees no
    difference; only a reader that neither reads nor leaves keeps the run waiting, as it would for longer output.
    Always False where stdout is not a pipe (a file, a terminal, a socket) or not a real file.
    """
    fd = _stdout_fd() if sys.stdout is not None else None
    if fd is None or not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return False
    try:
        import fcntl
        import select
        import termios
    except ImportError:  # Windows: no poll on a pipe; the writes that succeeded are all we know
        return False
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: POLLERR (no reader) is reported anyway
    unread = array.array("i", [0])
    while True:
        if poller.poll(50):
            return True
        try:
            fcntl.ioctl(fd, termios.FIONREAD, unread)
        except OSError:  # this system cannot tell what is unread: trust the writes that succeeded
            return False
        if unread[0] == 0:
            return False


def out(text: str = "") -> None:
    """Write one line of output (ASCII) to stdout."""
    write_stdout(ascii_text(text) + "\n")


def print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths], *rows]:
        out("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
