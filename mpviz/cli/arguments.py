"""Arguments several commands share: the one-line-error parser, autocast dtype spellings, the model's size flags,
and the attention run's whole config (`trace` and `export`)."""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Iterable

from mpviz.attention import available_devices, trace_attention
from mpviz.cli.output import EXIT_USAGE, ascii_text, one_line
from mpviz.model import (
    ATTENTION_KINDS,
    AUTOCAST_CHOICES,
    SOFTMAX_KINDS,
    AttentionConfig,
    ConfigError,
    parse_autocast_dtype,
)

DEFAULT_MODEL = AttentionConfig()
_TRACE_DEFAULTS = inspect.signature(trace_attention).parameters  # trace_attention's own device/dtype defaults


# What argparse must take as a value, not an option, where it starts with "-": argparse's own test knows only
# "-5" and "-.5", so "-1,5" (a step list), "-1e-3", "-inf" and "-nan" were read as unknown options. No option of
# this CLI looks like one of these (every option is --word or -h).
NEGATIVE_VALUE = re.compile(r"^-(?:\d|\.\d|inf|nan)[0-9a-z.,+_-]*$", re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)  # --loss must not silently mean --loss-multiplier
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_VALUE  # argparse's hook for "is this a negative number"

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


def add_run_args(p: argparse.ArgumentParser) -> None:
    """The attention run: --device --dtype, the model's sizes with --vocab, --attention --softmax --input-scale
    --no-causal; `run_config` reads them back (limits are the engine's: it raises ConfigError when tracing)."""
    p.add_argument("--device", default=_TRACE_DEFAULTS["device"].default, help=choices_text(available_devices()))
    p.add_argument(
        "--dtype", type=autocast_spelling, default=_TRACE_DEFAULTS["dtype"].default, help=choices_text(AUTOCAST_CHOICES)
    )
    add_model_args(p, vocab=True)
    p.add_argument("--attention", default=DEFAULT_MODEL.attention, choices=ATTENTION_KINDS)
    p.add_argument("--softmax", default=DEFAULT_MODEL.softmax, choices=SOFTMAX_KINDS)
    p.add_argument("--input-scale", type=float, default=DEFAULT_MODEL.input_scale)
    p.add_argument("--no-causal", action="store_true")


def run_config(args: argparse.Namespace) -> AttentionConfig:
    """The model config `add_run_args`'s flags ask for (args.device and args.dtype name the rest of the run)."""
    return AttentionConfig(
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
