"""Run `python -m mpviz` in-process: `main(argv)` with pytest's captured streams (no torch import per call)."""

from __future__ import annotations

from dataclasses import dataclass

from mpviz.__main__ import main


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(capsys, *args: str) -> CliResult:
    """`main(list(args))` with stdout/stderr captured by `capsys` (read fresh for this call)."""
    capsys.readouterr()  # drop anything an earlier step printed
    code = main(list(args))
    out, err = capsys.readouterr()
    return CliResult(code, out, err)
