"""mpviz: measure what mixed precision does inside one self-attention layer, or inside your own model in a notebook
(`mpviz.show`, mpviz/presentation/notebook.py). Importable without streamlit.

Importing mpviz imports nothing else (not even torch), starts no process and changes no global: each public name
below is imported on first use, so the app's server answers health before torch has loaded and `mpviz --help` is
quick. Its entry points (`trace`, `trace_attention`, `show`, the command line, the app's server and workers) first
make the low-precision CPU kernels safe to run (`mpviz.kernel_probe`): where they crash the process, oneDNN's ISA is
capped before the first one runs.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

# public name → the module that defines it
_PUBLIC = {
    "AttentionTrace": "mpviz.attention",
    "available_devices": "mpviz.attention",
    "trace_attention": "mpviz.attention",
    "LIMITS": "mpviz.model",
    "AttentionConfig": "mpviz.model",
    "ConfigError": "mpviz.model",
    "build": "mpviz.model",
    "parse_autocast_dtype": "mpviz.model",
    "validate": "mpviz.model",
    "OpEvent": "mpviz.trace",
    "TensorInfo": "mpviz.trace",
    "Trace": "mpviz.trace",
    "show": "mpviz.presentation.notebook",
}

__all__ = sorted(n for n in _PUBLIC if n != "show")


class _Package(types.ModuleType):
    """The package module, whose `trace` is always the function: importing the submodule mpviz.trace sets the
    package's attribute of that name, which would otherwise hide the function behind the module."""

    @property
    def trace(self) -> Any:
        return importlib.import_module("mpviz.trace").trace

    @trace.setter
    def trace(self, _module: types.ModuleType) -> None:  # the import system's setattr for the submodule: kept out
        pass


def __getattr__(name: str) -> Any:
    """A public name, or a submodule (`mpviz.bundle`), imported on first use."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module 'mpviz' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, "trace"})


sys.modules[__name__].__class__ = _Package
__all__ = [*__all__, "trace"]
