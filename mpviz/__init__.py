"""mpviz: measure what mixed precision does inside one self-attention layer. Importable without streamlit."""

from mpviz.attention import AttentionTrace, available_devices, trace_attention
from mpviz.model import LIMITS, AttentionConfig, ConfigError, build, parse_autocast_dtype, validate
from mpviz.trace import OpEvent, TensorInfo, Trace, trace

__all__ = [
    "LIMITS",
    "AttentionConfig",
    "AttentionTrace",
    "ConfigError",
    "OpEvent",
    "TensorInfo",
    "Trace",
    "available_devices",
    "build",
    "parse_autocast_dtype",
    "trace",
    "trace_attention",
    "validate",
]
