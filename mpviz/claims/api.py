"""The API claim: the tutorials write `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler`. What does the
installed torch say when that code runs? Each spelling is called and its deprecation warning or error recorded,
and so is the replacement the warning names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

from mpviz.claims.verdicts import Checked, Part, judged


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


def _default_fast_dtype() -> str:
    # Built, not entered: on a machine without a GPU entering it only warns and disables itself.
    return str(torch.cuda.amp.autocast().fast_dtype).removeprefix("torch.")


def check_cuda_amp_default_fp16() -> Checked:
    """Claim: `torch.cuda.amp.autocast()` without a dtype runs in fp16. Part: the context manager the tutorial's
    spelling builds has fast_dtype float16."""
    found: list[str] = []
    call = call_api("torch.cuda.amp.autocast()", lambda: found.append(_default_fast_dtype()))
    ev = DefaultDtypeEvidence(
        found[0] if found else "",
        {d: str(torch.get_autocast_dtype(d)).removeprefix("torch.") for d in ("cuda", "cpu")},
        call.deprecation,
    )
    return judged(
        31, [Part("default_fp16", ev.cuda_amp_autocast == "float16")], ev, {"fast_dtype": ev.cuda_amp_autocast}
    )
