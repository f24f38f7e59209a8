"""Command line: python -m mpviz <trace|policy|bits|softmax|scaler|recipes|claims|fp8|bench|lessons|export|app>
[--json].

Each subcommand has, in its module of mpviz/cli, one `_add_<name>(subparsers)` that declares its arguments
(choices and defaults read from the engine's constants) and one `_run_<name>(args)` that prints. `main(argv)` runs
in-process and returns the exit status. The contract:

- 0: done. With --json, stdout is one strict JSON document (no NaN/Infinity: they are the strings "nan", "inf").
- 2: the arguments or the config are not usable (bad value, out of the engine's limits, conflicting flags), or
  stdout cannot be written: exactly one line on stderr, never a traceback, nothing on stdout.
- 1: something failed inside (a probe's child process died, a bug): one line on stderr; MPVIZ_DEBUG=1 re-raises
  for the traceback.
- 141 (128 + SIGPIPE), silently: the reader went away before reading everything (`python -m mpviz trace | head
  -c 10`), however short the output: output that fits in the pipe's buffer is waited on until the reader has read
  it or gone (`mpviz.cli.output.reader_left`).

Output is ASCII, the same bytes on every terminal: the CLI's own words are ASCII, JSON escapes non-ASCII as
\\uXXXX, and any other non-ASCII text (a value echoed back) is written as a Python backslash escape. A terminal
set to ASCII (PYTHONIOENCODING=ascii) therefore gets the same output as a UTF-8 one.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from mpviz.cli import app, attention, claims, export, fp8, lessons, numbers, training
from mpviz.cli.arguments import Parser
from mpviz.cli.output import EXIT_INTERNAL, EXIT_PIPE, EXIT_USAGE, PROG, UsageError, one_line, reader_left, write_stdout
from mpviz.kernel_probe import ensure_safe_kernels
from mpviz.model import ConfigError

# name → (declare arguments, run), in the order `--help` lists them
COMMANDS: dict[str, tuple[Callable, Callable]] = {
    **attention.COMMANDS,
    **numbers.COMMANDS,
    **training.COMMANDS,
    **claims.COMMANDS,
    **fp8.COMMANDS,
    **lessons.COMMANDS,
    **export.COMMANDS,
    **app.COMMANDS,
}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add, _ in COMMANDS.values():
        add(sub)
    return parser


def _error(command: str | None, exc: BaseException | str) -> None:
    where = f"{PROG} {command}" if command else PROG
    text = exc if isinstance(exc, str) else str(exc) or type(exc).__name__
    if sys.stderr is not None:
        sys.stderr.write(f"{where}: error: {one_line(text)}\n")


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
        write_stdout("")  # fails now, before any work, if stdout is closed
        ensure_safe_kernels()  # before any command's first oneDNN kernel (a child process once per machine)
        COMMANDS[command][1](args)
        write_stdout()  # flush inside the try: a reader that went away shows up here, not at exit
        if reader_left():  # output that fit in the pipe, and the reader left without all of it
            raise BrokenPipeError
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
