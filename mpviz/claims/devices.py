"""Where the claims are measured: the two autocast policies, the autocast dtype, the attention block on each.

"cpu" is CPU autocast on this machine. "cuda" is CUDA's autocast policy: functions are probed on fake CUDA
tensors through torch's real AutocastCUDA kernels (`mpviz.policy.probe_call`), and the attention block's tensors
come from a real GPU when there is one, else from the "cuda-sim" emulation (CUDA's policy applied to CPU tensors).
"""

from __future__ import annotations

from functools import lru_cache

import torch

from mpviz.attention import AttentionTrace, available_devices, trace_attention
from mpviz.model import AttentionConfig

DEVICES = ("cpu", "cuda")  # "cuda": CUDA's autocast policy (probed; values emulated on CPU without a GPU)
AUTOCAST_DTYPE = "bfloat16"  # the tutorials' setting: every policy claim is checked under bf16 autocast
BLOCK = AttentionConfig()  # the attention block traced for landmark dtypes (manual attention: probs exist)


def trace_device(device: str) -> str:
    """Where `device`'s attention block runs: "cpu"; for "cuda" a real GPU if present, else "cuda-sim"."""
    if device == "cpu":
        return "cpu"
    return "cuda" if "cuda" in available_devices() else "cuda-sim"


@lru_cache(maxsize=2 * len(DEVICES))
def block_trace(device: str, autocast_dtype: str = AUTOCAST_DTYPE) -> AttentionTrace:
    """The attention block (`BLOCK`) traced forward and backward under autocast on `device`; cached."""
    return trace_attention(BLOCK, trace_device(device), autocast_dtype)


def measured_device() -> str:
    """The device timings and value checks run on: a GPU when there is one, else the CPU."""
    return "cuda" if torch.cuda.is_available() else "cpu"
