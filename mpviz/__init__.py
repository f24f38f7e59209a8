"""mpviz: measure what mixed precision does inside one self-attention layer, or inside your own model in a notebook
(`mpviz.show`, mpviz/presentation/notebook.py). Importable without streamlit.

Importing mpviz starts no process and changes no global. Its entry points (`trace`, `trace_attention`, `show`, the
command line, the app's server and workers) first make the low-precision CPU kernels safe to run
(`mpviz.kernel_probe`): where they crash the process, oneDNN's ISA is capped before the first one runs.
"""

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


def __getattr__(name: str):
    """`mpviz.show` (mpviz/presentation/notebook.py), imported on first use: anywidget and the view layer load only when
    a notebook asks for them."""
    if name == "show":
        from mpviz.presentation.notebook import show

        return show
    raise AttributeError(f"module 'mpviz' has no attribute {name!r}")
