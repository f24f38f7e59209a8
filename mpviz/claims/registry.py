"""The claims as data: which tutorial says what, where, how it is checked, and which group a page puts it in.

A `Claim` is an id, a short key (views look their words up by it), the seed tutorial files it is drawn from
(names in shared/seeds/, the most direct first; `SOURCES` gives each a title), the section of the first seed
where it is made, its topic (TOPICS), the check that measures it, and whether that check is slow (it trains or
times something: views run it on demand).
"""

from __future__ import annotations

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
    key: str  # stable short name; views look up their wording by it
    seeds: tuple[str, ...]  # seed tutorial files it is drawn from, the most direct first (titles: SOURCES)
    check: Callable[[], Checked] = field(repr=False, compare=False)
    topic: str = "autocast"  # one of TOPICS
    on_demand: bool = False  # slow (trains or times): views run it only when asked
    # Where in seeds[0] it is made: (heading as in the source, English gloss). ("", ""): the views' words carry it
    # (`section` in each claim's locale entry), as every claim added since these headings were kept here does.
    section: tuple[str, str] = ("", "")


SEED_AUTOCAST = "000_807445a89ff10fc0.txt"  # autocast and self-attention precision
SEED_BF16_VS_FP16 = "001_5fc31ddab86f0670.txt"  # why bf16 rather than fp16
SEED_SOFTMAX = "002_8b429bfe48cefe11.txt"  # why self-attention/softmax needs precision
SEED_MID_TRAIN = "003_4f55f79ef9af6724.txt"  # a bf16 training script, explained
SEED_SFT = "004_9b39a333a37e4e48.txt"  # mixed-precision setup of an SFT script

# seed file → (its title as the source gives it, in Chinese where the source has one; an English gloss).
SOURCES: dict[str, tuple[str, str]] = {
    SEED_AUTOCAST: ("LLM训练中Autocast精度管理机制", "How autocast manages precision in LLM training"),
    SEED_BF16_VS_FP16: ("LLM训练BF16与FP16对比分析", "BF16 versus FP16 for LLM training"),
    SEED_SOFTMAX: (
        "为什么LLM训练中，Self-Attention层对精度的要求非常高？",
        "Self-Attention Precision in LLM Training (why self-attention needs high precision)",
    ),
    SEED_MID_TRAIN: (
        "Chat Dialogue Log：scripts/mid_train.py 中期训练代码的混合精度训练",
        "Chat log: mixed-precision training in the mid-training script scripts/mid_train.py",
    ),
    SEED_SFT: ("05 - 混合精度训练配置深度分析", "05 - Mixed-precision training setup, analysed in depth"),
}
SOURCES |= fp8.SOURCES  # the fp8 claims' documentation and library sources (not seed tutorials)

S_SFT_EXAMPLE = ("五、autocast 自动混合精度原理 › 5.2 实际应用示例", "5. How autocast works › 5.2 A worked example")
S_SFT_MIXED = (
    "二、什么是混合精度训练？ › 2.2 混合精度训练",
    "2. What mixed-precision training is › 2.2 Mixed-precision training",
)
S_SFT_FORMATS = ("三、FP16 vs BF16 详细对比 › 3.2 关键区别", "3. FP16 vs BF16 in detail › 3.2 Key differences")
S_SFT_RULES = ("五、autocast 自动混合精度原理 › 5.1 工作机制", "5. How autocast works › 5.1 The mechanism")
S_SFT_SCALER = ("六、GradScaler 梯度缩放器 › 6.3 动态缩放策略", "6. GradScaler › 6.3 Dynamic scaling")
S_BF16_MECHANISM = (
    "2. 具体说说Autocast是如何实现的？ › 实现机制",
    "2. How autocast is implemented › Mechanism",
)
S_MID_LISTS = (
    "问题 6：自动混合精度的准则是什么？",
    "Question 6: what are autocast's rules?",
)

CLAIMS: tuple[Claim, ...] = (
    Claim(
        1,
        "softmax_fp32",
        (SEED_AUTOCAST, SEED_SOFTMAX, SEED_MID_TRAIN, SEED_SFT),
        autocast_policy.check_softmax_fp32,
        section=("1. Autocast 的核心工作机制", "1. How autocast works"),
    ),
    Claim(
        2,
        "matmul_low_precision",
        (SEED_BF16_VS_FP16, SEED_AUTOCAST, SEED_MID_TRAIN),
        autocast_policy.check_matmul_low_precision,
        section=("2. 具体说说Autocast是如何实现的？ › 实现机制", "2. How autocast is implemented › Mechanism"),
    ),
    Claim(
        3,
        "layer_norm_fp32",
        (SEED_MID_TRAIN, SEED_SOFTMAX, SEED_SFT),
        autocast_policy.check_layer_norm_fp32,
        section=(
            "问题 7：当你在 autocast 区域写代码时（比如 LayerNorm(Linear(x))）",
            "Question 7: LayerNorm(Linear(x)) inside an autocast region",
        ),
    ),
    Claim(
        4,
        "bf16_range",
        (SEED_BF16_VS_FP16, SEED_SFT),
        values.check_bf16_range,
        topic="formats",
        section=(
            "1. 为什么LLM要用BF16混合精度训练？相比FP16有哪些优势？",
            "1. Why LLMs train in BF16 mixed precision, and its advantages over FP16",
        ),
    ),
    Claim(
        5,
        "fp16_tiny_gradients",
        (SEED_SFT,),
        values.check_fp16_tiny_gradients,
        topic="formats",
        section=S_SFT_FORMATS,
    ),
    Claim(
        6,
        "close_scores",
        (SEED_SOFTMAX,),
        values.check_close_scores,
        topic="formats",
        section=(
            "四个关键技术原因 › 1. Softmax函数的指数级放大效应",
            "Four technical reasons › 1. Softmax amplifies exponentially",
        ),
    ),
    Claim(
        7,
        "loss_fp32",
        (SEED_SFT, SEED_BF16_VS_FP16, SEED_SOFTMAX),
        autocast_policy.check_loss_fp32,
        section=S_SFT_EXAMPLE,
    ),
    Claim(
        8,
        "bf16_no_scaler",
        (SEED_SFT, SEED_MID_TRAIN),
        grad_scaler.check_bf16_needs_no_scaler,
        topic="training",
        on_demand=True,
        section=(
            "七、完整训练流程示例 › 7.1 BF16训练（推荐）",
            "7. Complete training loops › 7.1 BF16 training (recommended)",
        ),
    ),
    Claim(
        9,
        "speedup",
        (SEED_SFT,),
        speed.check_speedup,
        topic="training",
        on_demand=True,
        section=S_SFT_MIXED,
    ),
    Claim(
        10,
        "matmul_accumulation",
        (SEED_AUTOCAST,),
        accumulation.check_matmul_accumulation,
        section=("2. 在Self-Attention层中的具体应用", "2. Inside the self-attention layer"),
    ),
    Claim(
        11,
        "bf16_tiny_gradients",
        (SEED_BF16_VS_FP16,),
        values.check_bf16_tiny_gradients,
        topic="formats",
        section=(
            "1. 为什么LLM要用BF16混合精度训练？ › BF16 的优势（对于LLM训练）",
            "1. Why BF16 for LLM training › BF16's advantages for LLM training",
        ),
    ),
    Claim(
        12,
        "cpu_no_mixed_precision",
        (SEED_SFT, SEED_MID_TRAIN),
        autocast_policy.check_cpu_has_no_mixed_precision,
        topic="code",
        section=("四、代码详解：步骤3配置 › 4.1 确定设备类型", "4. The code, step 3 › 4.1 Picking the device type"),
    ),
    Claim(
        13,
        "cuda_amp_api",
        (SEED_BF16_VS_FP16, SEED_SFT, SEED_AUTOCAST, SEED_SOFTMAX),
        api.check_cuda_amp_api,
        topic="code",
        section=(
            "2. 具体说说Autocast是如何实现的？ › 一个简单的工作流程示例",
            "2. How autocast is implemented › A simple training loop",
        ),
    ),
    Claim(
        14,
        "promote_list",
        (SEED_MID_TRAIN,),
        autocast_policy.check_promote_list,
        section=(
            "问题 6：自动混合精度的准则是什么？ › 3. 灰名单 (Promote List) -> 跟随最宽精度",
            "Question 6: what are autocast's rules? › 3. Grey list (promote list) -> follow the widest dtype",
        ),
    ),
    Claim(
        15,
        "unlisted_fall_back_to_fp32",
        (SEED_MID_TRAIN,),
        autocast_policy.check_unlisted_fall_back_to_fp32,
        section=(
            "问题 3：代码中明确指定了这两种精度么？ › Float32 是隐式默认的",
            "Question 3: does the code name both dtypes? › Float32 is the implicit default",
        ),
    ),
    Claim(
        16,
        "embedding_low_precision",
        (SEED_SFT,),
        autocast_policy.check_embedding_low_precision,
        section=S_SFT_EXAMPLE,
    ),
    Claim(
        17,
        "gradients_low_precision",
        (SEED_SFT, SEED_MID_TRAIN),
        gradients.check_gradients_low_precision,
        topic="training",
        section=S_SFT_MIXED,
    ),
    Claim(
        18,
        "scaler_no_op_bf16",
        (SEED_AUTOCAST, SEED_SFT, SEED_BF16_VS_FP16),
        grad_scaler.check_scaler_no_op_under_bf16,
        topic="training",
        section=("补充：GradScaler 的作用", "Addendum: what GradScaler is for"),
    ),
    Claim(
        19,
        "backoff_in_step",
        (SEED_SFT,),
        grad_scaler.check_backoff_in_step,
        topic="training",
        section=("六、GradScaler 梯度缩放器 › 6.2 GradScaler 使用", "6. GradScaler › 6.2 Using GradScaler"),
    ),
    Claim(
        20,
        "exp_limits",
        (SEED_SOFTMAX,),
        values.check_exp_limits,
        topic="formats",
        section=(
            "2. 溢出风险：数值计算的“天花板”与“地板”",
            "2. Overflow risk: the ceiling and floor of number formats",
        ),
    ),
    Claim(
        21,
        "bf16_holds_70000",
        (SEED_SFT,),
        values.check_bf16_holds_70000,
        topic="formats",
        section=S_SFT_FORMATS,
    ),
    Claim(
        22,
        "fp16_merges_close_scores",
        (SEED_SOFTMAX,),
        values.check_fp16_merges_10_and_10_01,
        topic="formats",
        section=(
            "1. 指数函数 `exp(x)`：微小差异的暴力放大器",
            "1. The exponential exp(x): a brute amplifier of small differences",
        ),
    ),
    Claim(
        23,
        "fp32_bf16_matmul_fp32",
        (SEED_AUTOCAST,),
        op_dtypes.check_fp32_bf16_matmul,
        section=("2. 在Self-Attention层中的具体应用", "2. Inside the self-attention layer"),
    ),
    Claim(24, "mean_trig_fp32", (SEED_BF16_VS_FP16,), op_dtypes.check_mean_trig_fp32, section=S_BF16_MECHANISM),
    Claim(
        25,
        "sum_fp32",
        (SEED_MID_TRAIN,),
        op_dtypes.check_sum_fp32,
        section=("问题 2", "Question 2"),
    ),
    Claim(26, "op_lists", (SEED_MID_TRAIN,), op_dtypes.check_op_lists, section=S_MID_LISTS),
    Claim(27, "activations_low", (SEED_SFT,), op_dtypes.check_activations_low, section=S_SFT_RULES),
    Claim(
        28,
        "mps_autocast",
        (SEED_MID_TRAIN,),
        autocast_policy.check_mps_autocast,
        topic="code",
        section=("问题 8 › 1) `torch.amp.autocast` 在 MPS 上“能用吗”？", "Question 8 › 1) Does autocast work on MPS?"),
    ),
    Claim(
        29,
        "scaler_defaults",
        (SEED_SFT,),
        grad_scaler.check_scaler_defaults,
        topic="training",
        section=S_SFT_SCALER,
    ),
    Claim(
        30,
        "bf16_halves_memory",
        (SEED_SFT,),
        memory.check_bf16_halves_memory,
        topic="training",
        section=("八、性能对比 › 8.1 训练速度", "8. Performance › 8.1 Training speed"),
    ),
    Claim(
        31,
        "cuda_amp_default_fp16",
        (SEED_SFT,),
        api.check_cuda_amp_default_fp16,
        topic="code",
        section=S_SFT_MIXED,
    ),
    Claim(
        32,
        "softmax_subtracts_max",
        (SEED_SOFTMAX,),
        softmax_range.check_softmax_subtracts_max,
        topic="formats",
        section=(
            "训练阶段 (Training Phase) › 1\\. 核心技巧：Log-Sum-Exp (LSE) 技巧",
            "Training phase › 1. The core trick: log-sum-exp",
        ),
    ),
    Claim(
        33,
        "softmax_output_overflows_fp16",
        (SEED_BF16_VS_FP16,),
        softmax_range.check_softmax_output_overflows_fp16,
        topic="formats",
        section=(
            "1. 为什么LLM要用BF16混合精度训练？相比FP16有哪些优势？ › FP16 的劣势（对于LLM训练）",
            "1. Why BF16 for LLM training › FP16's drawbacks for LLM training",
        ),
    ),
    Claim(
        34,
        "loss_division_outside_autocast",
        (SEED_MID_TRAIN,),
        op_dtypes.check_loss_division_outside_autocast,
        topic="code",
        section=("问题 4 › 3. Loss 的计算与处理应保持高精度", "Question 4 › 3. Loss computation should stay precise"),
    ),
    Claim(
        35,
        "bf16_scaling_keeps_bits",
        (SEED_BF16_VS_FP16,),
        grad_scaler.check_bf16_scaling_keeps_bits,
        topic="training",
        section=S_BF16_MECHANISM,
    ),
    Claim(
        36,
        "scaler_casts_back_to_bf16",
        (SEED_AUTOCAST,),
        grad_scaler.check_scaler_casts_back_to_bf16,
        topic="training",
        section=("2. 在Self-Attention层中的具体应用", "2. Inside the self-attention layer"),
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
    *(Claim(**spec) for spec in fp8.CLAIM_SPECS),  # from the fp8 world, ids 101 on (mpviz/claims/fp8.py)
)


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
