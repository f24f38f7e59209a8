"""Claims the tutorials make about mixed precision, each checked against measurements from this machine's torch.

A claim is data (`registry.Claim`). Its check returns `Checked`: a verdict code decided by named parts (each one
thing the claim says, measured true or false, per device where the devices were measured one by one), the
evidence (a frozen dataclass of measurements) and a few key measurements by name. Nothing here is a sentence:
views word each claim, part and verdict, and fill the wording from the evidence fields.

Modules, one idea each: `verdicts` (parts → verdicts), `devices` (where claims are measured), `autocast_policy`
(which dtype each op runs in), `op_dtypes` (the tutorials' op lists, one call per op), `gradients`, `values` (what
a format holds), `softmax_range` (softmax's numerics), `grad_scaler`, `memory`, `speed`, `accumulation`, `api`
(the code the tutorials write), `registry` (the claims, their sources and topics).

Verdict codes (VERDICTS): holds | partly_holds | depends_on_device | does_not_hold | inconclusive ("cannot be
decided here": a timing made on another device than the claim's, one whose spread is too wide to decide, or whose
verdict changes between the quartiles: no verdict is given). Where the tutorial speaks of one device (`about`),
that device's verdict is the claim's.
"""

from mpviz.claims.accumulation import AccumulationEvidence
from mpviz.claims.api import ApiCall, ApiEvidence, DefaultDtypeEvidence, DefaultFloatEvidence, api_status
from mpviz.claims.autocast_policy import (
    LOG_SOFTMAX_OP,
    CpuAutocastEvidence,
    DeviceRun,
    EmbeddingEvidence,
    FallbackEvidence,
    ModelOutputEvidence,
    MpsEvidence,
    PolicyEvidence,
    PromoteListEvidence,
)
from mpviz.claims.devices import AUTOCAST_DTYPE, BLOCK, DEVICES, block_trace, measured_device, trace_device
from mpviz.claims.grad_scaler import (
    Bf16ScalingEvidence,
    CastBackEvidence,
    DefaultsEvidence,
    NoOpEvidence,
    ScalerEvidence,
    ScalerStep,
    ScaleSizeEvidence,
    ScaleTrack,
    scaler_step,
)
from mpviz.claims.gradients import BackwardPlacement, BackwardPlacementEvidence, DeviceGradients, GradientsEvidence
from mpviz.claims.memory import MemoryEvidence
from mpviz.claims.op_dtypes import OpDtypeEvidence, OpRow
from mpviz.claims.registry import ALL, CLAIMS, SOURCES, TOPICS, Claim, Selection, check, claim, select
from mpviz.claims.softmax_range import OutputRangeEvidence, SoftmaxEvidence, UnderflowEvidence
from mpviz.claims.speed import (
    MAX_RELATIVE_SPREAD,
    SPEED_BLOCK,
    SPEED_REPEAT,
    SpeedEvidence,
    SpeedRow,
    quartile_verdicts,
    speed_verdict,
)
from mpviz.claims.values import (
    BigValueEvidence,
    BinEnds,
    CloseScoresEvidence,
    ExpEvidence,
    LevelsEvidence,
    Quoted,
    RangeEvidence,
    RangeSpanEvidence,
    ScorePair,
    StorageEvidence,
    identify_quoted,
    score_pair,
)
from mpviz.claims.verdicts import VERDICTS, Checked, Part, judged, verdict_counts

__all__ = [
    "ALL",
    "AUTOCAST_DTYPE",
    "BLOCK",
    "CLAIMS",
    "DEVICES",
    "LOG_SOFTMAX_OP",
    "MAX_RELATIVE_SPREAD",
    "SOURCES",
    "SPEED_BLOCK",
    "SPEED_REPEAT",
    "TOPICS",
    "VERDICTS",
    "AccumulationEvidence",
    "ApiCall",
    "ApiEvidence",
    "BackwardPlacement",
    "BackwardPlacementEvidence",
    "Bf16ScalingEvidence",
    "BigValueEvidence",
    "BinEnds",
    "CastBackEvidence",
    "Checked",
    "Claim",
    "CloseScoresEvidence",
    "CpuAutocastEvidence",
    "DefaultDtypeEvidence",
    "DefaultFloatEvidence",
    "DefaultsEvidence",
    "DeviceGradients",
    "DeviceRun",
    "EmbeddingEvidence",
    "ExpEvidence",
    "FallbackEvidence",
    "GradientsEvidence",
    "LevelsEvidence",
    "MemoryEvidence",
    "ModelOutputEvidence",
    "MpsEvidence",
    "NoOpEvidence",
    "OpDtypeEvidence",
    "OpRow",
    "OutputRangeEvidence",
    "Part",
    "PolicyEvidence",
    "PromoteListEvidence",
    "Quoted",
    "RangeEvidence",
    "RangeSpanEvidence",
    "ScaleSizeEvidence",
    "ScaleTrack",
    "ScalerEvidence",
    "ScalerStep",
    "ScorePair",
    "Selection",
    "SoftmaxEvidence",
    "SpeedEvidence",
    "SpeedRow",
    "StorageEvidence",
    "UnderflowEvidence",
    "api_status",
    "block_trace",
    "check",
    "claim",
    "identify_quoted",
    "judged",
    "measured_device",
    "quartile_verdicts",
    "scaler_step",
    "score_pair",
    "select",
    "speed_verdict",
    "trace_device",
    "verdict_counts",
]
