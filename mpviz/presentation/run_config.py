"""The run every tracing lesson shares: the attention block, the device and the autocast dtype, as a plain value.

The app reads it from the sidebar's widgets and the URL (mpviz.app.run_config); view models take it as an argument
(it is part of their memo keys) and word it with `describe`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mpviz.model import AttentionConfig

__all__ = ["DTYPE_CHOICES", "RunConfig", "describe"]

DTYPE_CHOICES = ("off", "fp16", "bf16")


@dataclass(frozen=True)
class RunConfig:
    config: AttentionConfig
    device: str
    dtype: str  # "off" | "fp16" | "bf16"


def describe(rc: RunConfig, words: Mapping) -> str:
    """The run in one line of `words` (common.toml's): device, autocast dtype, the block's sizes and kind."""
    c = rc.config
    return words["run_line"].format(
        device=words["device_labels"].get(rc.device, rc.device),
        dtype=words["dtype_labels"][rc.dtype],
        seq=c.seq_len,
        dim=c.d_model,
        heads=c.n_heads,
        attention=words["attention_labels"][c.attention],
        softmax=words["softmax_labels"][c.softmax],
        scale=f"{c.input_scale:g}",
    )
