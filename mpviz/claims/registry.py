"""The claims as data: which source says what, how it is checked, and which group a page puts it in.

A `Claim` is an id, a short key (views look its words up by it: the claim, its parts, its explanation, and the
heading of its first source where it is made), the sources it is drawn from (seed tutorial files in shared/seeds/
or a documentation key, the most direct first; their titles are words too, `[sources]` in mpviz/locales/*/claims.toml),
its topic (TOPICS), the check that measures it, and whether that check is slow (it trains or times something: views
run it on demand). Nothing here is a sentence.

A claim is declared below, or where its check is: in the `CLAIM_SPECS` (dicts of Claim's fields) of any module of
this package, which `gathered` finds. A new claim is then its check and evidence (one engine module), its words
(mpviz/locales/en and mpviz/locales/zh) and, if its evidence needs more than words, a view registered for the evidence's
type (mpviz.presentation.claim_evidence): at most four files, none of them a list to keep in step by hand.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mpviz.claims import (
    accumulation,
    api,
    autocast_policy,
    fp8,
    grad_scaler,
    gradients,
    memory,
    op_dtypes,
    softmax_range,
    speed,
    values,
)
from mpviz.claims.verdicts import VERDICTS, Checked
from mpviz.model import ConfigError

# What a claim is about; views group and filter by it.
TOPICS = ("autocast", "formats", "training", "code")


@dataclass(frozen=True)
class Claim:
    id: int
    key: str  # stable short name; views look up their words by it
    seeds: tuple[str, ...]  # the sources it is drawn from, the most direct first (keys of SOURCES)
    check: Callable[[], Checked] = field(repr=False, compare=False)
    topic: str = "autocast"  # one of TOPICS
    on_demand: bool = False  # slow (trains or times): views run it only when asked


SEED_AUTOCAST = "000_807445a89ff10fc0.txt"  # autocast and self-attention precision
SEED_BF16_VS_FP16 = "001_5fc31ddab86f0670.txt"  # why bf16 rather than fp16
SEED_SOFTMAX = "002_8b429bfe48cefe11.txt"  # why self-attention/softmax needs precision
SEED_MID_TRAIN = "003_4f55f79ef9af6724.txt"  # a bf16 training script, explained
SEED_SFT = "004_9b39a333a37e4e48.txt"  # mixed-precision setup of an SFT script

# Every source a claim may cite: the seed tutorials, then the fp8 claims' documentation and library sources.
SOURCES: tuple[str, ...] = (SEED_AUTOCAST, SEED_BF16_VS_FP16, SEED_SOFTMAX, SEED_MID_TRAIN, SEED_SFT, *fp8.SOURCES)

_DECLARED_HERE: tuple[Claim, ...] = (
    Claim(
        1, "softmax_fp32", (SEED_AUTOCAST, SEED_SOFTMAX, SEED_MID_TRAIN, SEED_SFT), autocast_policy.check_softmax_fp32
    ),
    Claim(
        2,
        "matmul_low_precision",
        (SEED_BF16_VS_FP16, SEED_AUTOCAST, SEED_MID_TRAIN),
        autocast_policy.check_matmul_low_precision,
    ),
    Claim(3, "layer_norm_fp32", (SEED_MID_TRAIN, SEED_SOFTMAX, SEED_SFT), autocast_policy.check_layer_norm_fp32),
    Claim(4, "bf16_range", (SEED_BF16_VS_FP16, SEED_SFT), values.check_bf16_range, topic="formats"),
    Claim(5, "fp16_tiny_gradients", (SEED_SFT,), values.check_fp16_tiny_gradients, topic="formats"),
    Claim(6, "close_scores", (SEED_SOFTMAX,), values.check_close_scores, topic="formats"),
    Claim(7, "loss_fp32", (SEED_SFT, SEED_BF16_VS_FP16, SEED_SOFTMAX), autocast_policy.check_loss_fp32),
    Claim(
        8,
        "bf16_no_scaler",
        (SEED_SFT, SEED_MID_TRAIN),
        grad_scaler.check_bf16_needs_no_scaler,
        topic="training",
        on_demand=True,
    ),
    Claim(9, "speedup", (SEED_SFT,), speed.check_speedup, topic="training", on_demand=True),
    Claim(10, "matmul_accumulation", (SEED_AUTOCAST,), accumulation.check_matmul_accumulation),
    Claim(11, "bf16_tiny_gradients", (SEED_BF16_VS_FP16,), values.check_bf16_tiny_gradients, topic="formats"),
    Claim(
        12,
        "cpu_no_mixed_precision",
        (SEED_SFT, SEED_MID_TRAIN),
        autocast_policy.check_cpu_has_no_mixed_precision,
        topic="code",
    ),
    Claim(
        13,
        "cuda_amp_api",
        (SEED_BF16_VS_FP16, SEED_SFT, SEED_AUTOCAST, SEED_SOFTMAX),
        api.check_cuda_amp_api,
        topic="code",
    ),
    Claim(14, "promote_list", (SEED_MID_TRAIN,), autocast_policy.check_promote_list),
    Claim(15, "unlisted_fall_back_to_fp32", (SEED_MID_TRAIN,), autocast_policy.check_unlisted_fall_back_to_fp32),
    Claim(16, "embedding_low_precision", (SEED_SFT,), autocast_policy.check_embedding_low_precision),
    Claim(
        17,
        "gradients_low_precision",
        (SEED_SFT, SEED_MID_TRAIN),
        gradients.check_gradients_low_precision,
        topic="training",
    ),
    Claim(
        18,
        "scaler_no_op_bf16",
        (SEED_AUTOCAST, SEED_SFT, SEED_BF16_VS_FP16),
        grad_scaler.check_scaler_no_op_under_bf16,
        topic="training",
    ),
    Claim(19, "backoff_in_step", (SEED_SFT,), grad_scaler.check_backoff_in_step, topic="training"),
    Claim(20, "exp_limits", (SEED_SOFTMAX,), values.check_exp_limits, topic="formats"),
    Claim(21, "bf16_holds_70000", (SEED_SFT,), values.check_bf16_holds_70000, topic="formats"),
    Claim(22, "fp16_merges_close_scores", (SEED_SOFTMAX,), values.check_fp16_merges_10_and_10_01, topic="formats"),
    Claim(23, "fp32_bf16_matmul_fp32", (SEED_AUTOCAST,), op_dtypes.check_fp32_bf16_matmul),
    Claim(24, "mean_trig_fp32", (SEED_BF16_VS_FP16,), op_dtypes.check_mean_trig_fp32),
    Claim(25, "sum_fp32", (SEED_MID_TRAIN,), op_dtypes.check_sum_fp32),
    Claim(26, "op_lists", (SEED_MID_TRAIN,), op_dtypes.check_op_lists),
    Claim(27, "activations_low", (SEED_SFT,), op_dtypes.check_activations_low),
    Claim(28, "mps_autocast", (SEED_MID_TRAIN,), autocast_policy.check_mps_autocast, topic="code"),
    Claim(29, "scaler_defaults", (SEED_SFT,), grad_scaler.check_scaler_defaults, topic="training"),
    Claim(30, "bf16_halves_memory", (SEED_SFT,), memory.check_bf16_halves_memory, topic="training"),
    Claim(31, "cuda_amp_default_fp16", (SEED_SFT,), api.check_cuda_amp_default_fp16, topic="code"),
    Claim(32, "softmax_subtracts_max", (SEED_SOFTMAX,), softmax_range.check_softmax_subtracts_max, topic="formats"),
    Claim(
        33,
        "softmax_output_overflows_fp16",
        (SEED_BF16_VS_FP16,),
        softmax_range.check_softmax_output_overflows_fp16,
        topic="formats",
    ),
    Claim(
        34,
        "loss_division_outside_autocast",
        (SEED_MID_TRAIN,),
        op_dtypes.check_loss_division_outside_autocast,
        topic="code",
    ),
    Claim(
        35, "bf16_scaling_keeps_bits", (SEED_BF16_VS_FP16,), grad_scaler.check_bf16_scaling_keeps_bits, topic="training"
    ),
    Claim(
        36, "scaler_casts_back_to_bf16", (SEED_AUTOCAST,), grad_scaler.check_scaler_casts_back_to_bf16, topic="training"
    ),
    Claim(
        37,
        "fp16_below_smallest_zero",
        (SEED_BF16_VS_FP16,),
        values.check_fp16_below_smallest_becomes_zero,
        topic="formats",
    ),
    Claim(38, "softmax_round_trip", (SEED_SFT,), autocast_policy.check_softmax_round_trip),
    Claim(39, "results_cast_back", (SEED_SOFTMAX,), autocast_policy.check_results_cast_back),
    Claim(40, "low_range_far_smaller", (SEED_SOFTMAX,), values.check_low_range_far_smaller, topic="formats"),
    Claim(41, "levels_per_binade", (SEED_BF16_VS_FP16,), values.check_levels_per_binade, topic="formats"),
    Claim(42, "all_underflow_nan", (SEED_SOFTMAX,), softmax_range.check_all_underflow_gives_nan, topic="formats"),
    Claim(43, "default_dtype_fp32", (SEED_MID_TRAIN,), api.check_default_dtype_fp32, topic="code"),
    Claim(44, "model_output_low", (SEED_SFT,), autocast_policy.check_model_output_low),
    Claim(45, "unlisted_keep_input_dtype", (SEED_AUTOCAST,), op_dtypes.check_unlisted_keep_input_dtype),
    Claim(46, "exp_fp32", (SEED_BF16_VS_FP16, SEED_MID_TRAIN), op_dtypes.check_exp_fp32),
    Claim(47, "lstm_low_precision", (SEED_MID_TRAIN,), op_dtypes.check_lstm_low_precision),
    Claim(48, "scale_follows_gradients", (SEED_SFT,), grad_scaler.check_scale_follows_gradient_size, topic="training"),
    Claim(
        49,
        "backward_inside_autocast",
        (SEED_MID_TRAIN,),
        gradients.check_backward_inside_autocast_changes_nothing,
        topic="training",
    ),
)


def gathered() -> tuple[Claim, ...]:
    """The claims declared above and in the `CLAIM_SPECS` of every module of this package, by id. ValueError when
    two share an id or a key."""
    package = sys.modules[__name__.rpartition(".")[0]]  # mpviz.claims, importing this module: its path is set
    names = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name != "registry")
    modules = [importlib.import_module(f"{package.__name__}.{name}") for name in names]
    specs = [spec for module in modules for spec in getattr(module, "CLAIM_SPECS", ())]
    found = sorted((*_DECLARED_HERE, *(Claim(**spec) for spec in specs)), key=lambda c: c.id)
    for attr in ("id", "key"):
        values = [getattr(c, attr) for c in found]
        if len(set(values)) != len(values):
            raise ValueError(f"two claims share an {attr}: {sorted({v for v in values if values.count(v) > 1})}")
    return tuple(found)


CLAIMS: tuple[Claim, ...] = gathered()


def claim(claim_id: int) -> Claim:
    """The claim with this id; ConfigError("id", …) for any other."""
    found = next((c for c in CLAIMS if c.id == claim_id), None)
    if found is None:
        raise ConfigError("id", claim_id, [c.id for c in CLAIMS], "no such claim")
    return found


def check(claim_id: int) -> Checked:
    """Measure one claim now (no caching here beyond the traced attention block)."""
    return claim(claim_id).check()


ALL = "all"  # the filter value that keeps every verdict / topic


@dataclass(frozen=True)
class Selection:
    """The claims a view shows for a verdict filter and a topic, in the order it shows them."""

    shown: tuple[Claim, ...]  # grouped by topic (TOPICS order), by id within a topic
    unplaced: tuple[Claim, ...]  # of the topic, not measured yet: a verdict filter cannot place them


def select(results: Mapping[int, Checked], verdict: str = ALL, topic: str = ALL) -> Selection:
    """Which claims to show: those of `topic` whose measured verdict is `verdict` ("all": no filter). A claim
    not in `results` is shown only without a verdict filter (as waiting to be measured). ConfigError for an
    unknown verdict or topic."""
    if verdict != ALL and verdict not in VERDICTS:
        raise ConfigError("verdict", verdict, (ALL, *VERDICTS), "unknown verdict")
    if topic != ALL and topic not in TOPICS:
        raise ConfigError("topic", topic, (ALL, *TOPICS), "unknown topic")
    ordered = sorted(CLAIMS, key=lambda c: (TOPICS.index(c.topic), c.id))
    of_topic = [c for c in ordered if topic in (ALL, c.topic)]
    if verdict == ALL:
        return Selection(tuple(of_topic), ())
    shown = tuple(c for c in of_topic if c.id in results and results[c.id].verdict == verdict)
    return Selection(shown, tuple(c for c in of_topic if c.id not in results))
