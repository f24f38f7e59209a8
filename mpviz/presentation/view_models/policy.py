"""The autocast policy lesson's view model: two devices, a filter and a probe call in; counts, the op table, the
probe's steps and the emulation check out (mpviz/pages/policy.py draws them).

A device's policy is probed once per process and probe cache folder; every result is shared by the class
(mpviz.presentation.memo). Engine calls go through the `mpviz.policy` module (tests replace its functions).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

import mpviz.policy as pol
from mpviz.emulation import EmulationCheck, check_emulation
from mpviz.model import AttentionConfig
from mpviz.presentation import runs, text
from mpviz.presentation.figures import policy as policy_fig
from mpviz.presentation.memo import memoised
from mpviz.presentation.run_config import RunConfig

__all__ = [
    "FILTER_CATEGORIES",
    "INPUT_DEFAULTS",
    "PROBE_DTYPES",
    "Counts",
    "counts",
    "counts_figure",
    "distinct_right",
    "emulation_check",
    "emulation_table",
    "how_probed_table",
    "label",
    "op_caption",
    "op_table",
    "parse_categories",
    "policy",
    "probe",
    "probe_cache",
    "set_opt_measured",
    "steps_figure",
]

FILTER_CATEGORIES = (*pol.CATEGORIES, pol.UNCLASSIFIED)
INPUT_DEFAULTS = ("float16", "float32", "float32")
PROBE_DTYPES = ("float16", "bfloat16")
SET_OPT_EXAMPLE = ("softmax", "aten::softmax.int")  # the probe function that shows fp32_set_opt_dtype, and its op


def _words() -> dict:
    return text.section("policy")


def label(device: str) -> str:
    """The device's name on the page ("CPU", "CUDA (emulated on CPU)" …)."""
    return _words()["device_labels"].get(device, device)


def parse_categories(raw: str) -> list[str]:
    """A link's "fp32,promote": the categories to show (a ValueError for an unknown one)."""
    chosen = [c for c in raw.split(",") if c]
    if any(c not in FILTER_CATEGORIES for c in chosen):
        raise ValueError(raw)
    return chosen


def distinct_right(left: str, right: str) -> str | None:
    """The device to compare `left` with when `right` is the same one (one device compared with itself would show
    nothing, and its widgets would collide); None when they already differ."""
    if right != left:
        return None
    devices = pol.probeable_devices()
    return next(d for d in ("cuda", "cpu", *devices) if d in devices and d != left)


# ── the two policies ────────────────────────────────────────────────────────────────────────────────────────
def probe_cache() -> str:
    """The folder the policy probe reads and writes its results in (part of what a policy was read from)."""
    return str(pol.cache_dir())


@memoised(words=False)
def policy(device: str, cache: str) -> pol.DevicePolicy:
    """The device's probed policy, read through the probe cache folder `cache` (`probe_cache()`); raises
    mpviz.policy.ChildProbeError when the probe's child process died."""
    return pol.device_policy(device)


def _policy(device: str) -> pol.DevicePolicy:
    return policy(device, probe_cache())


@memoised(words=False)
def _compared(left: str, right: str) -> pol.PolicyComparison:
    return pol.compare_policies(_policy(left), _policy(right))


@dataclass(frozen=True)
class Counts:
    """The four numbers at the top, and the sentence that says how the union makes "differs" exceed a total."""

    metrics: tuple[tuple[str, int], ...]  # (label, number)
    caption: str
    categories: tuple[str, ...]  # the categories either device uses, in order


@memoised
def counts(left: str, right: str) -> Counts:
    """How many ops each device's policy holds, how many in either, how many differ."""
    words, cmp = _words(), _compared(left, right)
    a, b = _policy(left), _policy(right)
    metrics = (
        (words["totals"].format(device=label(left)), len(a.ops())),
        (words["totals"].format(device=label(right)), len(b.ops())),
        (words["union_metric"], len(cmp.rows)),
        (words["differ_metric"], cmp.differ),
    )
    caption = words["differ_explained"].format(
        n=cmp.differ,
        union=len(cmp.rows),
        left=label(left),
        right=label(right),
        only_left=cmp.only[0],
        only_right=cmp.only[1],
        both_differ=cmp.both_differ,
        both_same=cmp.both_same,
    )
    shown = tuple(c for c in FILTER_CATEGORIES if any(c in p.categories for p in (a, b)))
    return Counts(metrics, caption, shown)


@memoised(returns="figure")
def counts_figure(left: str, right: str) -> go.Figure:
    """Each device's ops per category, side by side."""
    shown = counts(left, right).categories
    pair = (_policy(left), _policy(right))
    per_device = {label(p.device): p.counts() for p in pair}
    low_dtypes = {label(p.device): p.autocast_dtype for p in pair}
    return policy_fig.policy_counts_figure(per_device, {c: c for c in shown}, low_dtypes, labels=_words()["figure"])


@memoised(words=False)
def probe(function: str, input_dtypes: tuple[str, ...], device: str, autocast_dtype: str) -> pol.CallProbe:
    """What one call of PROBE_FUNCTIONS[function] really runs on `device` under autocast(`autocast_dtype`)."""
    return pol.probe_call(function, input_dtypes, device, autocast_dtype)


@memoised
def set_opt_measured(left: str, right: str) -> str | None:
    """What fp32_set_opt_dtype means in ops: softmax under each autocast dtype, on each device that lists it there
    (markdown), or None where neither does or no call computed."""
    words, (function, op) = _words(), SET_OPT_EXAMPLE
    lines = []
    for p in (_policy(left), _policy(right)):
        if p.category_of(op) != "fp32_set_opt_dtype":
            continue
        for dtype in PROBE_DTYPES:
            call = probe(function, (dtype,), p.device, dtype)
            casts = call.casts_before_compute
            if len(casts) == len(call.steps):  # the call failed before computing: nothing to say
                continue
            kernel = call.steps[len(casts)]
            said = {"device": label(p.device), "dtype": dtype, "op": kernel.op, "output": ", ".join(kernel.outputs)}
            if casts:
                said |= {"cast": casts[0].op, "frm": ", ".join(casts[0].inputs), "to": ", ".join(casts[0].outputs)}
                lines.append(words["set_opt_cast_first"].format(**said, input=", ".join(kernel.inputs)))
            else:
                lines.append(words["set_opt_no_cast"].format(**said, input=", ".join(kernel.inputs)))
    if not lines:
        return None
    return words["set_opt_measured"].format(op=op) + "\n" + "\n".join(f"- {line}" for line in lines)


# ── the op table ────────────────────────────────────────────────────────────────────────────────────────────
@memoised(words=False)
def _kept(left: str, right: str, search: str, categories: tuple[str, ...], only_differing: bool) -> tuple:
    needle, wanted = search.strip().lower(), set(categories)
    return tuple(
        r
        for r in _compared(left, right).rows
        if needle in r.op.lower() and any(c in wanted for c in r.categories) and (r.differs or not only_differing)
    )


@memoised(returns="table")
def op_table(left: str, right: str, search: str, categories: tuple[str, ...], only_differing: bool) -> pd.DataFrame:
    """Every op of either policy that matches the search, the categories and the "only differing" switch: its
    category on each device and whether they differ (an Arrow table, no row colours: a pandas Styler cost 24 ms of
    the one GIL per session for a few hundred rows, what thirty followers of a page change queue for)."""
    words, kept = _words(), _kept(left, right, search, categories, only_differing)
    return pd.DataFrame(
        {
            words["cols"]["op"]: [r.op for r in kept],
            label(left): [r.categories[0] or words["not_in_policy"] for r in kept],
            label(right): [r.categories[1] or words["not_in_policy"] for r in kept],
            words["cols"]["differs"]: [r.differs for r in kept],
        }
    )


@memoised
def op_caption(left: str, right: str, search: str, categories: tuple[str, ...], only_differing: bool) -> str:
    """How many ops the table shows of how many, and how many of them differ."""
    words, kept = _words(), _kept(left, right, search, categories, only_differing)
    said = {"n": len(kept), "total": len(_compared(left, right).rows), "d": sum(r.differs for r in kept)}
    said |= {"left": label(left), "right": label(right)}
    return words["shown"].format(**said) + " " + words["not_in_policy_note"]


@memoised(returns="table")
def how_probed_table(left: str, right: str) -> list[dict]:
    """The probe's own notes: ops called with a hand-built example, casts that ignore autocast's dtype, and ops
    left unclassified (with the reason and the first line of the error). No rows when there are none."""
    words = _words()
    notes, reasons, cols = words["probe_notes"], words["unclassified_reasons"], words["how_cols"]
    return [
        {
            cols["device"]: label(p.device),
            cols["op"]: op,
            cols["category"]: p.category_of(op),
            cols["how"]: "; ".join(
                notes[c].format(dtype=p.fixed_cast_dtype.get(op, "?")) if c in notes else reasons.get(c, c)
                for c in codes
            ),
            cols["error"]: p.probe_errors.get(op, ""),
        }
        for p in (_policy(left), _policy(right))
        for op, codes in sorted(p.notes.items())
    ]


@memoised(returns="figure")
def steps_figure(function: str, input_dtypes: tuple[str, ...], device: str, autocast_dtype: str) -> go.Figure:
    """The ops one probe call ran, in order, casts marked."""
    return policy_fig.call_steps_figure(list(probe(function, input_dtypes, device, autocast_dtype).steps))


# ── the emulation check ─────────────────────────────────────────────────────────────────────────────────────
@memoised(heavy=True, words=False)  # a child process per config
def emulation_check(config: AttentionConfig, dtype: str) -> EmulationCheck:
    """The config's trace under CUDA's policy emulated on CPU, checked against the real CUDA kernels (fake
    tensors, in a child process). Raises mpviz.policy.ChildProbeError when that child died."""
    emulated = runs.attention_trace(RunConfig(config, "cuda-sim", dtype))
    return check_emulation(emulated.trace, emulated.config)


@memoised(returns="table")
def emulation_table(config: AttentionConfig, dtype: str) -> pd.DataFrame:
    """Each forward landmark's dtype under real CUDA and under the emulation, and whether they agree."""
    cols, check = _words()["landmark_cols"], emulation_check(config, dtype)
    return pd.DataFrame(
        {
            cols["landmark"]: list(check.landmarks),
            cols["cuda"]: [c for c, _ in check.landmarks.values()],
            cols["emulated"]: [e for _, e in check.landmarks.values()],
            cols["same"]: [c == e for c, e in check.landmarks.values()],
        }
    )
