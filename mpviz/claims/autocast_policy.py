"""Claims about which dtype autocast runs each op in, measured on both policies (CPU's and CUDA's).

Each check probes everyday functions under autocast (`mpviz.policy.probe_call`: real kernels on CPU, CUDA's real
AutocastCUDA kernels on fake tensors), looks the ops up in each device's probed policy, and reads the dtypes the
traced attention block's landmarks came out in. A claim's parts are judged per device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

# Private: fake CUDA tensors run CUDA's autocast kernels without a GPU; if it moves, this import fails loudly.
from torch._subclasses.fake_tensor import FakeTensorMode

from mpviz.claims.devices import AUTOCAST_DTYPE, DEVICES, block_trace, trace_device
from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.isolation import autocast_shared
from mpviz.policy import CallProbe, autocast_backends, autocast_state, device_policy, probe_call
from mpviz.stats import dtype_name

FunctionCall = tuple[str, tuple[str, ...]]  # (PROBE_FUNCTIONS name, input dtypes)


@dataclass(frozen=True)
class DeviceRun:
    """What one device's autocast did with the ops a claim is about."""

    device: str  # "cpu" | "cuda"
    trace_device: str  # where the attention block ran: "cpu", "cuda-sim" (emulated on CPU) or "cuda"
    categories: dict[str, str | None]  # op → category in the device's probed policy; None = not in the policy
    probes: tuple[CallProbe, ...]  # each probed function under autocast (CUDA: fake tensors, real kernels)
    landmarks: dict[str, str]  # attention-block landmark → the dtype it came out in
    low_precision_ops: tuple[str, ...]  # the probes' computing ops (no casts, no views) that output bf16
    op_dtypes: dict[str, tuple[str, ...]]  # each computing op of the probes → the dtypes of its outputs

    def probe(self, function: str) -> CallProbe:
        return next(p for p in self.probes if p.function == function)


@dataclass(frozen=True)
class PolicyEvidence:
    autocast_dtype: str
    devices: tuple[DeviceRun, ...]  # in DEVICES order

    def on(self, device: str) -> DeviceRun:
        return next(r for r in self.devices if r.device == device)


@dataclass(frozen=True)
class PromoteListEvidence(PolicyEvidence):
    """Claim 14's probes: a type of its own, so that its view (the calls, autocast on and off) is picked by it."""


@dataclass(frozen=True)
class FallbackEvidence(PolicyEvidence):
    """Claim 15's probes: a type of its own, so that its view (each example's category per policy) is picked by it."""


def _is_view(op: str) -> bool:
    """Whether the ATen op named like "aten.t.default" returns an alias of its input (a view, detach)."""
    ns, name, overload = op.split(".")
    schema = getattr(getattr(getattr(torch.ops, ns), name), overload)._schema
    return any(r.alias_info is not None for r in schema.returns)


def _device_run(
    device: str, functions: tuple[FunctionCall, ...], ops: tuple[str, ...], landmarks: tuple[str, ...]
) -> DeviceRun:
    policy = device_policy(device)
    probes = tuple(probe_call(fn, dtypes, device, AUTOCAST_DTYPE) for fn, dtypes in functions)
    trace = block_trace(device).trace
    computing = [s for p in probes for s in p.steps if not s.is_cast and not _is_view(s.op)]
    low = tuple(dict.fromkeys(s.op for s in computing if AUTOCAST_DTYPE in s.outputs))
    return DeviceRun(
        device=device,
        trace_device=trace_device(device),
        categories={op: policy.category_of(op) for op in ops},
        probes=probes,
        landmarks={name: trace.landmark_event(name).outputs[0].dtype for name in landmarks},
        low_precision_ops=low,
        op_dtypes={s.op: s.outputs for s in computing},
    )


def _policy_claim(
    claim_id: int,
    functions: tuple[FunctionCall, ...],
    ops: tuple[str, ...],
    landmarks: tuple[str, ...],
    parts: Callable[[DeviceRun], list[Part]],
    about: str | None = None,
    evidence: type[PolicyEvidence] = PolicyEvidence,
) -> Checked:
    """Run the probes on every device; each device's verdict comes from `parts(run)` (parts without a device).
    `about`: the device the tutorial speaks of, whose verdict is the claim's (see `verdicts.judged`)."""
    runs = tuple(_device_run(d, functions, ops, landmarks) for d in DEVICES)
    judged_parts = [Part(p.code, p.holds, r.device, p.subject) for r in runs for p in parts(r)]
    headline: dict[str, object] = {}
    for r in runs:
        headline |= {f"{r.device}_{p.function}_out": p.output_dtype for p in r.probes}
        headline |= {f"{r.device}_{name}": dtype for name, dtype in r.landmarks.items()}
    return judged(claim_id, judged_parts, evidence(AUTOCAST_DTYPE, runs), headline, about)


def check_softmax_fp32() -> Checked:
    """Claim: autocast computes softmax in float32. Parts: softmax of a bf16 input returns float32; the
    attention block's probs come out float32. The tutorial speaks of CUDA ("autocast picks the precision for CUDA
    ops"): CUDA's verdict is the claim's, CPU's is measured beside it."""
    return _policy_claim(
        1,
        (("softmax", (AUTOCAST_DTYPE,)),),
        ("aten::softmax.int",),
        ("scores", "probs"),
        lambda r: [
            Part("softmax_returns_fp32", r.probe("softmax").output_dtype == "float32"),
            Part("probs_fp32", r.landmarks["probs"] == "float32"),
        ],
        about="cuda",
    )


def check_matmul_low_precision() -> Checked:
    """Claim: matmul and linear run in low precision under autocast. Parts: each probe with float32 inputs
    returns bf16; each matmul-made landmark of the block is bf16."""
    return _policy_claim(
        2,
        (("matmul", ("float32", "float32")), ("linear", ("float32", "float32", "float32"))),
        ("aten::matmul", "aten::linear"),
        ("q", "scores", "context", "logits"),
        lambda r: [
            *(Part("returns_low", p.output_dtype == AUTOCAST_DTYPE, subject=p.function) for p in r.probes),
            Part("block_matmuls_low", all(d == AUTOCAST_DTYPE for d in r.landmarks.values())),
        ],
    )


def check_layer_norm_fp32() -> Checked:
    """Claim: autocast keeps LayerNorm in float32. Part: layer_norm of a bf16 input (what a bf16 linear hands
    on) returns float32. The block's x_norm is shown, not judged: its input x is float32 on both devices."""
    return _policy_claim(
        3,
        (("layer_norm", (AUTOCAST_DTYPE, "float32", "float32")),),
        ("aten::layer_norm", "aten::native_layer_norm"),
        ("x", "x_norm"),
        lambda r: [Part("layer_norm_returns_fp32", r.probe("layer_norm").output_dtype == "float32")],
        about="cuda",
    )


LOG_SOFTMAX_OP = "aten._log_softmax.default"  # cross-entropy's inner step, where the devices differ


def check_loss_fp32() -> Checked:
    """Claim: the loss is computed in float32. Parts: cross-entropy of bf16 logits returns float32; none of its
    computing ops (log_softmax, nll_loss) runs in bf16.

    The headline says exactly where the devices differ: the returned dtype (`<device>_cross_entropy_out`) and
    the dtype the internal `_log_softmax` ran in (`<device>_log_softmax_dtype`, from `DeviceRun.op_dtypes`).
    The seed's autocast is `torch.cuda.amp.autocast`: CUDA's verdict is the claim's, CPU's is measured beside it.
    """
    checked = _policy_claim(
        7,
        (("cross_entropy", (AUTOCAST_DTYPE,)),),
        ("aten::cross_entropy_loss", "aten::log_softmax.int", "aten::nll_loss"),
        ("logits", "loss"),
        lambda r: [
            Part("loss_returns_fp32", r.probe("cross_entropy").output_dtype == "float32"),
            Part("no_low_precision_step", not r.low_precision_ops),
        ],
        about="cuda",
    )
    for run in checked.evidence.devices:
        checked.headline[f"{run.device}_log_softmax_dtype"] = run.op_dtypes.get(LOG_SOFTMAX_OP, (None,))[0]
    return checked


# ── the tutorials' lists (claims 14, 15) ────────────────────────────────────────────────────────────────────
PROMOTE_LIST_OPS = (  # what a tutorial puts on autocast's "promote" (grey) list
    "aten::add.Tensor",
    "aten::sub.Tensor",
    "aten::mul.Tensor",
    "aten::cat",
    "aten::stack",
    "aten::relu",
    "aten::gelu",
)
LISTING_CATEGORIES = ("promote", "fp32")  # the lists that claim could mean


def check_promote_list() -> Checked:
    """Claim: add, sub, mul, cat, stack, relu and gelu sit on autocast's promote list (widest input wins).
    One part per op and device: the op is in that device's promote or fp32 category. The probes show what
    really decides their dtype: ordinary type promotion, the same with autocast off. The seed's script enables
    autocast only on CUDA: CUDA decides, CPU is measured beside it."""
    return _policy_claim(
        14,
        (
            ("add", (AUTOCAST_DTYPE, "float32")),
            ("mul", (AUTOCAST_DTYPE, "float32")),
            ("cat", (AUTOCAST_DTYPE, "float32")),
            ("relu", (AUTOCAST_DTYPE,)),
            ("gelu", (AUTOCAST_DTYPE,)),
        ),
        PROMOTE_LIST_OPS,
        ("out",),  # x (float32) + attention (bf16): the block's residual add
        lambda r: [Part("listed", r.categories[op] in LISTING_CATEGORIES, subject=op) for op in PROMOTE_LIST_OPS],
        about="cuda",
        evidence=PromoteListEvidence,
    )


FALLBACK_FUNCTIONS: tuple[tuple[FunctionCall, str], ...] = (  # the tutorial's own examples; the op each is
    (("softmax", (AUTOCAST_DTYPE,)), "aten::softmax.int"),
    (("layer_norm", (AUTOCAST_DTYPE, "float32", "float32")), "aten::layer_norm"),
)


def check_unlisted_fall_back_to_fp32() -> Checked:
    """Claim: ops autocast cannot run in bf16, "such as Softmax and LayerNorm", fall back to "the default Tensor
    precision", float32: nobody names float32 for them. Judged on the tutorial's own examples, per device, two
    parts per example: a bf16 input comes back float32; it does so by falling back (the device's policy does not
    list the op). The seed's script enables autocast only on CUDA: CUDA decides, CPU is measured beside it."""
    return _policy_claim(
        15,
        tuple(call for call, _ in FALLBACK_FUNCTIONS),
        tuple(op for _, op in FALLBACK_FUNCTIONS),
        ("x_norm", "probs"),
        lambda r: [
            part
            for (fn, _), op in FALLBACK_FUNCTIONS
            for part in (
                Part("returns_fp32", r.probe(fn).output_dtype == "float32", subject=fn),
                Part(
                    "falls_back",
                    r.categories[op] is None and r.probe(fn).output_dtype == "float32",
                    subject=fn,
                ),
            )
        ],
        about="cuda",
        evidence=FallbackEvidence,
    )


# ── softmax's round trip and casting back (claims 38, 39) ───────────────────────────────────────────────────
def _computes_in(probe: CallProbe, dtype: str) -> bool:
    """Whether one of the probe's computing ops (no cast, no view) output `dtype`."""
    return any(dtype in s.outputs for s in probe.steps if not s.is_cast and not _is_view(s.op))


def check_softmax_round_trip() -> Checked:
    """Claim: inside the model, softmax goes "BF16 → FP32 → BF16". Parts per device: softmax of a bf16 input
    computes in float32; its result comes back bf16. The seed's autocast is `torch.cuda.amp.autocast`: CUDA
    decides, CPU is measured beside it."""
    return _policy_claim(
        38,
        (("softmax", (AUTOCAST_DTYPE,)),),
        ("aten::softmax.int",),
        ("scores", "probs"),
        lambda r: [
            Part("computes_fp32", _computes_in(r.probe("softmax"), "float32")),
            Part("returns_low", r.probe("softmax").output_dtype == AUTOCAST_DTYPE),
        ],
        about="cuda",
    )


CAST_BACK_FUNCTIONS: tuple[FunctionCall, ...] = (("softmax", (AUTOCAST_DTYPE,)), ("cross_entropy", (AUTOCAST_DTYPE,)))


def check_results_cast_back() -> Checked:
    """Claim: for softmax and the loss, data is cast from FP16/BF16 to FP32, computed, then the result is
    converted back to low precision. A part per function and device: it computed in float32 and returned bf16."""
    return _policy_claim(
        39,
        CAST_BACK_FUNCTIONS,
        ("aten::softmax.int", "aten::cross_entropy_loss"),
        ("probs", "loss"),
        lambda r: [
            Part(
                "cast_back",
                _computes_in(r.probe(fn), "float32") and r.probe(fn).output_dtype == AUTOCAST_DTYPE,
                subject=fn,
            )
            for fn, _ in CAST_BACK_FUNCTIONS
        ],
    )


# ── the model's output under autocast (claim 44) ────────────────────────────────────────────────────────────
OUTPUT_DTYPES = ("bfloat16", "float16")  # the seed says the output "should be torch.bfloat16 or torch.float16"


@dataclass(frozen=True)
class ModelOutputEvidence:
    """The attention block's output (its logits, from the last linear) and its loss, per device and autocast dtype."""

    logits: dict[str, dict[str, str]]  # device → autocast dtype → logits dtype
    loss: dict[str, dict[str, str]]  # device → autocast dtype → loss dtype
    trace_devices: dict[str, str]  # device → where the block ran ("cuda-sim": CUDA's policy emulated on CPU)


def check_model_output_low() -> Checked:
    """Claim: under autocast `output = model(input)` prints torch.bfloat16 or torch.float16. A part per device
    and autocast dtype: the block's output (logits from its last linear layer) has that dtype. The loss is shown
    beside it. The seed's autocast is `torch.cuda.amp.autocast`: CUDA decides."""

    def dtype(device: str, low: str, name: str) -> str:
        return block_trace(device, low).trace.landmark_event(name).outputs[0].dtype

    ev = ModelOutputEvidence(
        {d: {low: dtype(d, low, "logits") for low in OUTPUT_DTYPES} for d in DEVICES},
        {d: {low: dtype(d, low, "loss") for low in OUTPUT_DTYPES} for d in DEVICES},
        {d: trace_device(d) for d in DEVICES},
    )
    parts = [
        Part("output_low", ev.logits[d][low] == low, device=d, subject=low) for d in DEVICES for low in OUTPUT_DTYPES
    ]
    headline: dict[str, object] = {f"{d}_{low}_logits": ev.logits[d][low] for d in DEVICES for low in OUTPUT_DTYPES}
    headline |= {f"{d}_{low}_loss": ev.loss[d][low] for d in DEVICES for low in OUTPUT_DTYPES}
    return judged(44, parts, ev, headline, about="cuda")


# ── CPU autocast (claim 12) ─────────────────────────────────────────────────────────────────────────────────
LOW_DTYPES = ("bfloat16", "float16")


@dataclass(frozen=True)
class CpuAutocastEvidence:
    probes: tuple[CallProbe, ...]  # linear on float32 inputs under CPU autocast, one per LOW_DTYPES entry
    policy_counts: dict[str, int]  # category → ops in CPU's probed autocast policy
    cpu_capability: str  # torch.backends.cpu.get_cpu_capability(): the vector ISA torch's CPU kernels use
    block_landmarks: dict[str, str]  # the attention block under CPU bf16 autocast: landmark → dtype


def check_cpu_has_no_mixed_precision() -> Checked:
    """Claim: the CPU has no mixed precision (so a script uses nullcontext there). Parts: CPU autocast leaves
    linear in float32 under each low dtype; CPU's policy lists no op to run in low precision."""
    probes = tuple(probe_call("linear", ("float32",) * 3, "cpu", low) for low in LOW_DTYPES)
    counts = device_policy("cpu").counts()
    trace = block_trace("cpu").trace
    landmarks = {name: trace.landmark_event(name).outputs[0].dtype for name in ("x", "q", "scores", "loss")}
    ev = CpuAutocastEvidence(probes, counts, torch.backends.cpu.get_cpu_capability(), landmarks)
    parts = [Part("no_low_linear", p.output_dtype == "float32", subject=p.autocast_dtype) for p in probes]
    parts.append(Part("no_low_ops_listed", counts.get("lower_precision_fp", 0) == 0))
    headline = {f"cpu_linear_under_{p.autocast_dtype}": p.output_dtype for p in probes}
    headline["cpu_lower_precision_ops"] = counts.get("lower_precision_fp", 0)
    return judged(12, parts, ev, headline)


# ── embedding (claim 16) ────────────────────────────────────────────────────────────────────────────────────
EMBEDDING_SHAPE = (32, 8)  # (vocab, d) of the probed table
EMBEDDING_OP = "aten::embedding"


@dataclass(frozen=True)
class EmbeddingEvidence:
    weight_dtype: str  # the table's dtype, as a model stores it
    outputs: dict[str, str]  # device → dtype F.embedding returned under bf16 autocast
    outputs_without_autocast: dict[str, str]
    categories: dict[str, str | None]  # device → aten::embedding's category in its policy (None: not listed)
    fake: dict[str, bool]  # device → probed on fake tensors through the real autocast kernels


def _embedding_dtype(device: str, low: torch.dtype | None) -> str:
    """The dtype F.embedding returns for a float32 table on `device` with autocast(low) on (None: off)."""
    fake = device != "cpu"
    with FakeTensorMode() if fake else autocast_shared(), autocast_state(device, low):
        weight = torch.empty(EMBEDDING_SHAPE, device=device)  # float32, like an nn.Embedding's weight
        ids = torch.zeros(4, dtype=torch.int64, device=device)
        return dtype_name(F.embedding(ids, weight).dtype)


def check_embedding_low_precision() -> Checked:
    """Claim: under autocast the embedding's output is bf16. Part per device: F.embedding of a float32 table
    returns bf16 under bf16 autocast."""
    low = getattr(torch, AUTOCAST_DTYPE)
    ev = EmbeddingEvidence(
        weight_dtype="float32",
        outputs={d: _embedding_dtype(d, low) for d in DEVICES},
        outputs_without_autocast={d: _embedding_dtype(d, None) for d in DEVICES},
        categories={d: device_policy(d).category_of(EMBEDDING_OP) for d in DEVICES},
        fake={d: d != "cpu" for d in DEVICES},
    )
    parts = [Part("embedding_returns_low", ev.outputs[d] == AUTOCAST_DTYPE, device=d) for d in DEVICES]
    headline = {f"{d}_embedding_out": ev.outputs[d] for d in DEVICES}
    return judged(16, parts, ev, headline)


# ── MPS (claim 28) ──────────────────────────────────────────────────────────────────────────────────────────
MPS_FUNCTIONS: tuple[FunctionCall, ...] = (("linear", ("float32",) * 3), ("softmax", ("float16",)))


@dataclass(frozen=True)
class MpsEvidence:
    registered: dict[str, int]  # device → ops with a kernel at its Autocast dispatch key in this build
    default_dtype: str  # torch.get_autocast_dtype("mps")
    probes: tuple[CallProbe, ...]  # MPS_FUNCTIONS on fake MPS tensors through the real AutocastMPS kernels


def check_mps_autocast() -> Checked:
    """Claim: `torch.amp.autocast(device_type="mps")` is usually usable in recent torch. Parts: this build
    registers autocast kernels for MPS; linear on float32 inputs comes back in MPS's default autocast dtype."""

    registered = {b.device: b.n_ops for b in autocast_backends() if b.device in ("cpu", "cuda", "mps")}
    low = dtype_name(torch.get_autocast_dtype("mps"))
    probes = tuple(probe_call(fn, dtypes, "mps", low) for fn, dtypes in MPS_FUNCTIONS)
    ev = MpsEvidence(registered, low, probes)  # not MPS's whole policy: probing it takes a child process ~20 s
    parts = [
        Part("kernels_registered", registered.get("mps", 0) > 0),
        Part("linear_low", probes[0].output_dtype == low),
    ]
    headline = {
        "mps_kernels": registered.get("mps", 0),
        "mps_default_dtype": low,
        "mps_linear_out": probes[0].output_dtype,
    }
    return judged(28, parts, ev, headline)
