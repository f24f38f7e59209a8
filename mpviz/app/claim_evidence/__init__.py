"""How the claims page shows each claim's evidence: one view function per claim key (`VIEWS`), kept in modules that
mirror mpviz.claims (autocast_policy, op_dtypes, gradients, grad_scaler, memory, api, values, softmax_range, speed,
accumulation), and the word
helpers they share (`words`). Words are looked up when a view runs, never at import, so every session sees its own
language."""

from mpviz.app.claim_evidence.accumulation import accumulation_view
from mpviz.app.claim_evidence.api import api_view, default_dtype_view, default_float_view
from mpviz.app.claim_evidence.autocast_policy import (
    cpu_autocast_view,
    embedding_view,
    fallback_view,
    model_output_view,
    mps_view,
    policy_view,
    promote_view,
)
from mpviz.app.claim_evidence.fp8 import cast_view, format_role_view, mx_gradient_view, nvfp4_view
from mpviz.app.claim_evidence.grad_scaler import (
    backoff_view,
    bf16_scaling_view,
    cast_back_view,
    defaults_view,
    no_op_view,
    scale_size_view,
    scaler_view,
)
from mpviz.app.claim_evidence.gradients import backward_view, gradients_view
from mpviz.app.claim_evidence.memory import memory_view
from mpviz.app.claim_evidence.op_dtypes import op_view
from mpviz.app.claim_evidence.softmax_range import output_range_view, subtracts_max_view, underflow_view
from mpviz.app.claim_evidence.speed import speed_view
from mpviz.app.claim_evidence.values import (
    big_value_view,
    close_scores_view,
    exp_view,
    levels_view,
    merge_view,
    range_span_view,
    range_view,
    storage_view,
)
from mpviz.app.claim_evidence.words import BADGE_COLORS, badge, op_name

__all__ = ["BADGE_COLORS", "VIEWS", "badge", "op_name"]

VIEWS = {
    "softmax_fp32": policy_view,
    "matmul_low_precision": policy_view,
    "layer_norm_fp32": policy_view,
    "bf16_range": range_view,
    "fp16_tiny_gradients": storage_view,
    "close_scores": close_scores_view,
    "loss_fp32": policy_view,
    "bf16_no_scaler": scaler_view,
    "speedup": speed_view,
    "matmul_accumulation": accumulation_view,
    "bf16_tiny_gradients": storage_view,
    "cpu_no_mixed_precision": cpu_autocast_view,
    "cuda_amp_api": api_view,
    "promote_list": promote_view,
    "unlisted_fall_back_to_fp32": fallback_view,
    "embedding_low_precision": embedding_view,
    "gradients_low_precision": gradients_view,
    "scaler_no_op_bf16": no_op_view,
    "backoff_in_step": backoff_view,
    "exp_limits": exp_view,
    "bf16_holds_70000": big_value_view,
    "fp16_merges_close_scores": merge_view,
    "fp32_bf16_matmul_fp32": op_view,
    "mean_trig_fp32": op_view,
    "sum_fp32": op_view,
    "op_lists": op_view,
    "activations_low": op_view,
    "mps_autocast": mps_view,
    "scaler_defaults": defaults_view,
    "bf16_halves_memory": memory_view,
    "cuda_amp_default_fp16": default_dtype_view,
    "softmax_subtracts_max": subtracts_max_view,
    "softmax_output_overflows_fp16": output_range_view,
    "loss_division_outside_autocast": op_view,
    "bf16_scaling_keeps_bits": bf16_scaling_view,
    "scaler_casts_back_to_bf16": cast_back_view,
    "fp16_below_smallest_zero": storage_view,
    "softmax_round_trip": policy_view,
    "results_cast_back": policy_view,
    "low_range_far_smaller": range_span_view,
    "levels_per_binade": levels_view,
    "all_underflow_nan": underflow_view,
    "default_dtype_fp32": default_float_view,
    "model_output_low": model_output_view,
    "unlisted_keep_input_dtype": op_view,
    "exp_fp32": op_view,
    "lstm_low_precision": op_view,
    "scale_follows_gradients": scale_size_view,
    "backward_inside_autocast": backward_view,
    "fp8_formats_by_role": format_role_view,  # the fp8 claims (mpviz/claims/fp8.py)
    "mxfp8_needs_no_e5m2": mx_gradient_view,
    "nvfp4_two_level": nvfp4_view,
    "fp8_cast_saturates": cast_view,
}
