"""Arguments several commands share: the one-line-error parser, autocast dtype spellings, the model's size flags."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from mpviz.cli.output import EXIT_USAGE, ascii_text, one_line
from mpviz.model import AUTOCAST_CHOICES, AttentionConfig, ConfigError, parse_autocast_dtype

DEFAULT_MODEL = AttentionConfig()


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)  # --loss must not silently mean --loss-multiplier
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)}\n")

    def _print_message(self, message: str, file=None) -> None:  # help and errors: ASCII like everything else
        file = file if file is not None else sys.stderr
        if message and file is not None:
            file.write(ascii_text(message))


def autocast_spelling(text: str) -> str:
    """argparse type for --dtype: any spelling `parse_autocast_dtype` accepts, kept as given."""
    try:
        parse_autocast_dtype(text)
    except ConfigError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an autocast dtype ({' | '.join(AUTOCAST_CHOICES)})"
        ) from None
    return text


def choices_text(values: Iterable[object]) -> str:
    return " | ".join(str(v) for v in values)


def add_model_args(p: argparse.ArgumentParser, vocab: bool = False, base: AttentionConfig = DEFAULT_MODEL) -> None:
    """--seq --dim --heads (--vocab) --seed, defaulting to `base`'s values."""
    p.add_argument("--seq", type=int, default=base.seq_len)
    p.add_argument("--dim", type=int, default=base.d_model)
    p.add_argument("--heads", type=int, default=base.n_heads)
    if vocab:
        p.add_argument("--vocab", type=int, default=base.vocab)
    p.add_argument("--seed", type=int, default=base.seed)
