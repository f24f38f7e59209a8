"""The API claim: the tutorials write `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler`. What does the
installed torch say when that code runs? Each spelling is called and its deprecation warning or error recorded,
and so is the replacement the warning names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

from mpviz.claims.devices import block_trace, trace_device
from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.stats import dtype_name


@dataclass(frozen=True)
class ApiCall:
    code: str  # the call as source code
    deprecation: str | None  # text of the FutureWarning / DeprecationWarning it raised; None if none
    error: str | None  # "TypeError: …" (first line) when the call raised; None if it ran

    @property
    def current(self) -> bool:
        """Runs, and torch does not call it deprecated."""
        return api_status(self) == "current"


def api_status(call: ApiCall) -> str:
    """ "error" | "deprecated" | "current"."""
    return "error" if call.error else ("deprecated" if call.deprecation else "current")


@dataclass(frozen=True)
class ApiEvidence:
    torch_version: str
    calls: tuple[ApiCall, ...]  # the tutorials' spellings
    replacements: tuple[ApiCall, ...]  # what the deprecation warnings point to, called the same way


def call_api(code: str, call: Callable[[], object]) -> ApiCall:
    """Run `call` and keep its first deprecation warning and its error, if any. The warnings filter is
    process-wide for the moment it runs (Python's catch_warnings); a result is cached, so it runs rarely."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
            error = None
        except Exception as e:  # the error is the measurement
            error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    deprecations = [str(w.message) for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning))]
    return ApiCall(code, deprecations[0] if deprecations else None, error)


TUTORIAL_CALLS: tuple[tuple[str, Callable[[], object]], ...] = (
    ("torch.cuda.amp.autocast(dtype=torch.bfloat16)", lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)),
    ("torch.cuda.amp.GradScaler()", lambda: torch.cuda.amp.GradScaler()),
    (
        "from torch.cuda.amp import autocast\nautocast(device_type='cuda', dtype=torch.bfloat16)",
        lambda: torch.cuda.amp.autocast(device_type="cuda", dtype=torch.bfloat16),
    ),
)
REPLACEMENT_CALLS: tuple[tuple[str, Callable[[], object]], ...] = (
    ("torch.amp.autocast('cuda', dtype=torch.bfloat16)", lambda: torch.amp.autocast("cuda", dtype=torch.bfloat16)),
    ("torch.amp.GradScaler('cuda')", lambda: torch.amp.GradScaler("cuda")),
)


def check_cuda_amp_api() -> Checked:
    """Claim: PyTorch's autocast and scaler are `torch.cuda.amp.autocast` and `torch.cuda.amp.GradScaler`, called
    as the tutorials call them. Parts per call: it runs; torch does not call it deprecated."""
    ev = ApiEvidence(
        torch.__version__,
        tuple(call_api(code, fn) for code, fn in TUTORIAL_CALLS),
        tuple(call_api(code, fn) for code, fn in REPLACEMENT_CALLS),
    )
    parts = []
    for c in ev.calls:  # a call that raised says nothing about deprecation: only its failure is judged
        parts.append(Part("runs", c.error is None, subject=c.code))
        if c.error is None:
            parts.append(Part("not_deprecated", c.deprecation is None, subject=c.code))
    headline: dict[str, object] = {c.code.replace("\n", "; "): api_status(c) for c in ev.calls}  # one line each
    headline["replacements_current"] = all(c.current for c in ev.replacements)
    return judged(13, parts, ev, headline)


# ── the default dtype of torch.cuda.amp.autocast() (claim 31) ───────────────────────────────────────────────
@dataclass(frozen=True)
class DefaultDtypeEvidence:
    cuda_amp_autocast: str  # torch.cuda.amp.autocast().fast_dtype: what `with torch.cuda.amp.autocast():` uses
    torch_autocast: dict[str, str]  # device → torch.get_autocast_dtype(device), for contrast
    deprecation: str | None  # what torch said when the tutorial's spelling was called
    forward: dict[str, str]  # the attention block's forward under CUDA's policy with that dtype: landmark → dtype
    trace_device: str  # where that forward ran: "cuda", or "cuda-sim" (CUDA's policy emulated on CPU)

    @property
    def low_landmarks(self) -> tuple[str, ...]:
        return tuple(n for n, d in self.forward.items() if d == self.cuda_amp_autocast)

    @property
    def other_landmarks(self) -> tuple[str, ...]:
        return tuple(n for n, d in self.forward.items() if d != self.cuda_amp_autocast)


FORWARD_LANDMARKS = ("x_norm", "q", "scores", "probs", "context", "out", "logits", "loss")


def _default_fast_dtype() -> str:
    # Built, not entered: on a machine without a GPU entering it only warns and disables itself.
    return str(torch.cuda.amp.autocast().fast_dtype).removeprefix("torch.")


def check_cuda_amp_default_fp16() -> Checked:
    """Claim: `torch.cuda.amp.autocast()` without a dtype runs the forward pass in fp16. Parts: the context
    manager the tutorial's spelling builds has fast_dtype float16; under CUDA's policy with that dtype the
    attention block's forward makes fp16 tensors; every tensor of that forward is fp16 (what "runs the forward
    in FP16" says: autocast leaves some in float32)."""
    found: list[str] = []
    call = call_api("torch.cuda.amp.autocast()", lambda: found.append(_default_fast_dtype()))
    fast = found[0] if found else ""
    trace = block_trace("cuda", fast or "float16").trace
    ev = DefaultDtypeEvidence(
        fast,
        {d: str(torch.get_autocast_dtype(d)).removeprefix("torch.") for d in ("cuda", "cpu")},
        call.deprecation,
        {n: trace.landmark_event(n).outputs[0].dtype for n in FORWARD_LANDMARKS if n in trace.landmarks},
        trace_device("cuda"),
    )
    parts = [
        Part("default_fp16", ev.cuda_amp_autocast == "float16"),
        Part("forward_makes_fp16", ev.cuda_amp_autocast == "float16" and bool(ev.low_landmarks)),
        Part("whole_forward_fp16", bool(ev.forward) and not ev.other_landmarks),
    ]
    return judged(31, parts, ev, {"fast_dtype": ev.cuda_amp_autocast, "float32_in_forward": ev.other_landmarks})


# ── PyTorch's default dtype (claim 43) ──────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class DefaultFloatEvidence:
    default_dtype: str  # torch.get_default_dtype()
    factories: dict[str, str]  # "torch.randn(2)" … → the dtype it made
    parameters: dict[str, str]  # "nn.Linear.weight" … → the dtype of a freshly built module's parameter


def check_default_dtype_fp32() -> Checked:
    """Claim: PyTorch's default floating dtype is float32: tensors made without a dtype and the parameters of
    nn.Linear, nn.LayerNorm … are float32. Parts: the default dtype; each factory; each parameter."""
    linear, norm = torch.nn.Linear(4, 4), torch.nn.LayerNorm(4)
    ev = DefaultFloatEvidence(
        dtype_name(torch.get_default_dtype()),
        {
            "torch.randn(2)": dtype_name(torch.randn(2).dtype),
            "torch.zeros(2)": dtype_name(torch.zeros(2).dtype),
            "torch.tensor([1.0])": dtype_name(torch.tensor([1.0]).dtype),
        },
        {
            "nn.Linear.weight": dtype_name(linear.weight.dtype),
            "nn.Linear.bias": dtype_name(linear.bias.dtype),
            "nn.LayerNorm.weight": dtype_name(norm.weight.dtype),
        },
    )
    parts = [Part("default_fp32", ev.default_dtype == "float32")]
    parts += [Part("made_fp32", d == "float32", subject=code) for code, d in ev.factories.items()]
    parts += [Part("parameter_fp32", d == "float32", subject=name) for name, d in ev.parameters.items()]
    return judged(43, parts, ev, {"default_dtype": ev.default_dtype})
