"""Which dtype each named op returns under each device's autocast: the tutorials' op lists, one row per call.

A tutorial names ops ("bmm, conv, GRU run in BF16; group_norm, log, pow in FP32") and says which dtype autocast
gives them. Each call here runs under bf16 autocast on every device of `DEVICES` (CPU: real tensors; CUDA: fake
tensors through torch's real AutocastCUDA kernels), once with autocast on and once off, and its op is looked up in
that device's probed policy. A part per call and device: it returned the dtype the tutorial says.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import torch
import torch.nn.functional as F

# Private: fake CUDA tensors run CUDA's autocast kernels without a GPU; if it moves, this import fails loudly.
from torch._subclasses.fake_tensor import FakeTensorMode

from mpviz.claims.devices import AUTOCAST_DTYPE, DEVICES
from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.isolation import autocast_shared
from mpviz.policy import autocast_state, device_policy
from mpviz.stats import dtype_name

LOW = "low"  # an expected dtype meaning "the autocast dtype"
GRAD_ACCUM_STEPS = 4  # the divisor of the tutorial's `loss / grad_accum_steps`


@dataclass(frozen=True)
class OpFunction:
    """A call a tutorial names: how to run it, on floating inputs of these shapes, and its ATen op."""

    call: Callable[..., torch.Tensor]
    shapes: tuple[tuple[int, ...], ...]
    op: str  # looked up in each device's policy: "aten::bmm"


FUNCTIONS: dict[str, OpFunction] = {
    "matmul": OpFunction(torch.matmul, ((4, 8), (8, 4)), "aten::matmul"),
    "bmm": OpFunction(torch.bmm, ((2, 4, 8), (2, 8, 4)), "aten::bmm"),
    "conv1d": OpFunction(F.conv1d, ((1, 4, 8), (4, 4, 3)), "aten::conv1d"),
    # One GRU step (input, hidden state, then the weights and biases a module holds): the cell, not nn.GRU, which
    # on CUDA runs through cuDNN. On fake CUDA tensors the cell's fused kernel is refused too (shown, not judged).
    "gru_cell": OpFunction(torch.gru_cell, ((2, 8), (2, 8), (24, 8), (24, 8), (24,), (24,)), "aten::gru_cell"),
    "group_norm": OpFunction(lambda x: F.group_norm(x, 2), ((2, 4, 8),), "aten::group_norm"),
    "log": OpFunction(torch.log, ((4, 8),), "aten::log"),
    "pow": OpFunction(lambda x: torch.pow(x, 2.0), ((4, 8),), "aten::pow.Tensor_Scalar"),
    "sum": OpFunction(torch.sum, ((4, 8),), "aten::sum"),
    "mean": OpFunction(torch.mean, ((4, 8),), "aten::mean"),
    "sin": OpFunction(torch.sin, ((4, 8),), "aten::sin"),
    "cos": OpFunction(torch.cos, ((4, 8),), "aten::cos"),
    "tan": OpFunction(torch.tan, ((4, 8),), "aten::tan"),
    "relu": OpFunction(F.relu, ((4, 8),), "aten::relu"),
    "gelu": OpFunction(F.gelu, ((4, 8),), "aten::gelu"),
    "silu": OpFunction(F.silu, ((4, 8),), "aten::silu"),
    "softplus": OpFunction(F.softplus, ((4, 8),), "aten::softplus"),
    "div": OpFunction(lambda loss: loss / GRAD_ACCUM_STEPS, ((),), "aten::div.Tensor"),  # `loss / grad_accum_steps`
    "exp": OpFunction(torch.exp, ((4, 8),), "aten::exp"),
    # One LSTM step (input, hidden and cell state, the weights and biases), and a one-layer LSTM over 3 steps
    # (what nn.LSTM calls): CUDA lists the cell; CPU lists only oneDNN's LSTM layer, reached through torch.lstm.
    "lstm_cell": OpFunction(
        lambda x, h, c, w_ih, w_hh, b_ih, b_hh: torch.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)[0],
        ((2, 8), (2, 8), (2, 8), (32, 8), (32, 8), (32,), (32,)),
        "aten::lstm_cell",
    ),
    "lstm": OpFunction(
        lambda x, h, c, *weights: torch.lstm(
            x, (h.unsqueeze(0), c.unsqueeze(0)), weights, True, 1, 0.0, False, False, True
        )[0],
        ((2, 3, 8), (2, 8), (2, 8), (32, 8), (32, 8), (32,), (32,)),
        "aten::lstm.input",
    ),
}


@dataclass(frozen=True)
class OpCall:
    """One call a claim is about: the function, its inputs' dtypes, and the dtype the tutorial says it returns."""

    function: str  # a key of FUNCTIONS
    inputs: tuple[str, ...]  # dtype of each floating input
    expected: str  # "float32" or LOW


@dataclass(frozen=True)
class OpRow:
    call: OpCall
    device: str  # "cpu" | "cuda"
    category: str | None  # the op's category in the device's probed policy; None: not listed
    returned: str | None  # dtype under bf16 autocast; None when torch refused the call
    returned_without_autocast: str | None
    error: str | None  # "TypeError: …" when torch refused the call
    fake: bool  # fake tensors through the device's real autocast kernels
    error_without_autocast: str | None = None  # what torch said when it refused the call with autocast off

    @property
    def expected(self) -> str:
        return AUTOCAST_DTYPE if self.call.expected == LOW else self.call.expected


@dataclass(frozen=True)
class OpDtypeEvidence:
    autocast_dtype: str
    rows: tuple[OpRow, ...]  # per call, per device (DEVICES order)

    def row(self, function: str, device: str) -> OpRow:
        return next(r for r in self.rows if r.call.function == function and r.device == device)


def returned_dtype(device: str, function: str, inputs: tuple[str, ...], low: torch.dtype | None) -> str:
    """The dtype FUNCTIONS[function] returns on `device` for inputs of `inputs` with autocast(low) on (None: off).
    CPU runs real tensors; other devices fake ones, through their real autocast kernels. Raises what torch raises."""
    spec, fake = FUNCTIONS[function], device != "cpu"
    shared = nullcontext() if fake else autocast_shared()
    with FakeTensorMode() if fake else nullcontext(), shared, autocast_state(device, low):
        g = torch.Generator().manual_seed(0)
        tensors = [
            torch.rand(shape, generator=g).add(0.5).to(device=device, dtype=getattr(torch, d))
            if not fake
            else torch.empty(shape, device=device, dtype=getattr(torch, d))
            for shape, d in zip(spec.shapes, inputs, strict=True)
        ]
        return dtype_name(spec.call(*tensors).dtype)


def _refusal(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def measure_row(call: OpCall, device: str) -> OpRow:
    low = getattr(torch, AUTOCAST_DTYPE)
    try:
        on, error = returned_dtype(device, call.function, call.inputs, low), None
    except Exception as e:  # torch refusing the call is a measurement to show
        on, error = None, _refusal(e)
    try:
        off, error_off = returned_dtype(device, call.function, call.inputs, None), None
    except Exception as e:  # a mixed-dtype call autocast makes possible may be refused without it
        off, error_off = None, _refusal(e)
    category = device_policy(device).category_of(FUNCTIONS[call.function].op)
    return OpRow(call, device, category, on, off, error, device != "cpu", error_off)


def op_claim(claim_id: int, calls: tuple[OpCall, ...], about: str | None = None) -> Checked:
    """Every call on every device; a part per call and device: it returned the dtype the tutorial says. A call
    torch refused here (a GRU cell on fake CUDA tensors needs CUDA's fused kernel) is shown, not judged: it
    measured nothing."""
    ev = OpDtypeEvidence(AUTOCAST_DTYPE, tuple(measure_row(c, d) for c in calls for d in DEVICES))
    parts = [Part("returns", r.returned == r.expected, r.device, r.call.function) for r in ev.rows if not r.error]
    headline: dict[str, object] = {f"{r.device}_{r.call.function}_out": r.returned for r in ev.rows}
    return judged(claim_id, parts, ev, headline, about)


def _calls(functions: tuple[str, ...], expected: str) -> tuple[OpCall, ...]:
    """Each function on one bf16 input (two for matmul-like calls, three for conv's weight)."""
    return tuple(OpCall(f, (AUTOCAST_DTYPE,) * len(FUNCTIONS[f].shapes), expected) for f in functions)


def check_fp32_bf16_matmul() -> Checked:
    """Claim: a matmul of a float32 by a bf16 tensor runs as FP32 × BF16 → FP32 (one input is float32). Part per
    device: matmul(float32, bf16) under autocast returns float32. With autocast off torch refuses the mixed call
    (`OpRow.error_without_autocast`): the table shows that, not a dtype."""
    return op_claim(23, (OpCall("matmul", ("float32", AUTOCAST_DTYPE), "float32"),))


def check_mean_trig_fp32() -> Checked:
    """Claim: reductions such as mean, and trigonometric functions, are kept in float32. Part per function and
    device: it returns float32 for a bf16 input. The seed's autocast is `device_type='cuda'`: CUDA decides."""
    return op_claim(24, _calls(("mean", "sin", "cos", "tan"), "float32"), about="cuda")


def check_sum_fp32() -> Checked:
    """Claim: `sum` (accumulation) is forced to float32. Part per device: sum of a bf16 tensor returns float32.
    The seed's script enables autocast only on CUDA: CUDA decides."""
    return op_claim(25, _calls(("sum",), "float32"), about="cuda")


def check_op_lists() -> Checked:
    """Claim: bmm, conv and GRU are cast to bf16 (float32 inputs); group_norm, log and pow to float32 (bf16
    inputs). Part per op and device: it returns the dtype its list says. The seed's script enables autocast only
    on CUDA: CUDA decides, CPU is measured beside it."""
    low = tuple(OpCall(f, ("float32",) * len(FUNCTIONS[f].shapes), LOW) for f in ("bmm", "conv1d", "gru_cell"))
    return op_claim(26, low + _calls(("group_norm", "log", "pow"), "float32"), about="cuda")


def check_activations_low() -> Checked:
    """Claim: activation functions run in BF16/FP16. Part per function and device: it returns bf16 for a bf16
    input (what a bf16 linear hands on). The seed's autocast is `torch.cuda.amp.autocast`: CUDA decides."""
    return op_claim(27, _calls(("relu", "gelu", "silu", "softplus"), LOW), about="cuda")


def check_loss_division_outside_autocast() -> Checked:
    """Claim: `loss / grad_accum_steps` is float32 because it runs outside autocast. The loss arrives float32
    (claim 7). Parts per device: the division outside autocast returns float32; inside autocast it would not
    (else being outside is not what makes it float32)."""
    ev = OpDtypeEvidence(AUTOCAST_DTYPE, tuple(measure_row(OpCall("div", ("float32",), "float32"), d) for d in DEVICES))
    parts = []
    for r in ev.rows:
        parts += [
            Part("fp32_outside", r.returned_without_autocast == "float32", r.device),
            Part("outside_decides", r.returned != "float32", r.device),
        ]
    headline: dict[str, object] = {f"{r.device}_inside": r.returned for r in ev.rows}
    headline |= {f"{r.device}_outside": r.returned_without_autocast for r in ev.rows}
    return judged(34, parts, ev, headline)


# ── the claims added from the seeds' remaining sentences (45–47) ────────────────────────────────────────────
UNLISTED_FUNCTIONS = ("relu", "gelu", "sin", "mean", "exp")  # exp is listed on CUDA: judged only where it is not


def check_unlisted_keep_input_dtype() -> Checked:
    """Claim: an op on no list follows its input: BF16 -> BF16, FP32 -> FP32. Each function on a bf16 and on a
    float32 input, per device; a part per call whose op that device's policy does not list: it returned its
    input's dtype. Listed calls are shown, not judged. The seed speaks of CUDA ops: CUDA decides."""
    calls = tuple(
        OpCall(f, (d,), LOW if d == AUTOCAST_DTYPE else d)
        for f in UNLISTED_FUNCTIONS
        for d in (AUTOCAST_DTYPE, "float32")
    )
    ev = OpDtypeEvidence(AUTOCAST_DTYPE, tuple(measure_row(c, d) for c in calls for d in DEVICES))
    parts = [
        Part("keeps", r.returned == r.expected, r.device, f"{r.call.function}({r.call.inputs[0]})")
        for r in ev.rows
        if r.category is None and not r.error
    ]
    headline: dict[str, object] = {f"{r.device}_{r.call.function}_{r.call.inputs[0]}_out": r.returned for r in ev.rows}
    return judged(45, parts, ev, headline, about="cuda")


def check_exp_fp32() -> Checked:
    """Claim: `exp` is on the list autocast keeps in FP32. Part per device: exp of a bf16 tensor returns float32.
    The seeds' autocast is `device_type='cuda'`: CUDA decides."""
    return op_claim(46, _calls(("exp",), "float32"), about="cuda")


def check_lstm_low_precision() -> Checked:
    """Claim: RNNs such as LSTM are on the list autocast casts to BF16/FP16. Parts per call and device (float32
    inputs): an LSTM cell and a one-layer LSTM return bf16. A call torch refused is shown, not judged. The seed's
    script enables autocast only on CUDA: CUDA decides."""
    calls = tuple(OpCall(f, ("float32",) * len(FUNCTIONS[f].shapes), LOW) for f in ("lstm_cell", "lstm"))
    return op_claim(47, calls, about="cuda")
