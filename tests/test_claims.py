"""mpviz.claims: every tutorial claim's verdict as measured on this machine's torch (CPU build, no GPU).

Each test pins the torch behaviour its claim's verdict rests on, so it fails if torch changes that behaviour.
Checks run once per test session (`checked`); the two slow ones (training, timing) only in slow tests.
"""

import json
import math
import re
from functools import cache

import numpy as np
import pytest
import torch

from mpviz import claims
from mpviz.__main__ import main
from mpviz.app import text as locale
from mpviz.claims import fp8 as fp8_claims
from mpviz.claims import grad_scaler, gradients
from mpviz.formats import rounding_bin
from mpviz.model import ConfigError, build
from mpviz.policy import device_policy
from mpviz.serialize import dumps
from mpviz.timing import Spread
from tests.prerequisites import require_seeds

SLOW = {c.id for c in claims.CLAIMS if c.on_demand}


@cache
def checked(claim_id: int) -> claims.Checked:
    return claims.check(claim_id)


def parts(r: claims.Checked, device: str | None = None) -> dict[tuple[str, str | None], bool]:
    return {(p.code, p.subject): p.holds for p in r.parts if p.device == device}


# ── the registry ────────────────────────────────────────────────────────────────────────────────────────────
def test_claims_are_data_with_unique_ids_keys_topics_and_seed_file_names():
    ids = [c.id for c in claims.CLAIMS]
    assert ids == [*range(1, 50), *range(101, 105)]  # from 101: the fp8 world's claims (mpviz/claims/fp8.py)
    assert len({c.key for c in claims.CLAIMS}) == len(ids)
    for c in claims.CLAIMS:
        seed_file = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")
        assert c.seeds and all(seed_file.fullmatch(s) or s in fp8_claims.SOURCES for s in c.seeds), c.key
        assert c.topic in claims.TOPICS, c.key
    assert {c.id for c in claims.CLAIMS if c.on_demand} == {8, 9}
    assert {t: sum(c.topic == t for c in claims.CLAIMS) for t in claims.TOPICS} == {
        "autocast": 19,
        "formats": 17,
        "training": 11,
        "code": 6,
    }


def test_every_cited_seed_has_a_title_and_every_claim_a_section_read_from_the_source():
    seeds = require_seeds()  # ../shared/seeds: a clone on its own skips this test (CI fails without them)
    cited = {s for c in claims.CLAIMS for s in c.seeds}
    assert cited == set(claims.SOURCES)
    titles = {lang: locale.load(lang, "claims")["sources"] for lang in ("zh", "en")}
    assert set(titles["zh"]) == set(titles["en"]) == cited  # the engine keeps keys; the titles are words
    tutorials = [c for c in claims.CLAIMS if c.seeds[0] not in fp8_claims.SOURCES]  # the fp8 claims cite docs
    for name in set(claims.SOURCES) - set(fp8_claims.SOURCES):
        title_zh, title_en = titles["zh"][name], titles["en"][name]
        text = (seeds / name).read_text(encoding="utf-8")
        first_heading = text.splitlines()[0].lstrip("# ").strip()
        assert first_heading in title_zh or first_heading in title_en, name
        assert re.search(r"[\u4e00-\u9fff]", title_zh) and title_en.isascii(), name
    words = {lang: locale.load(lang, "claims")["claims"] for lang in ("zh", "en")}
    for c in claims.CLAIMS:  # every claim's section is in its words (zh quotes the source, en glosses it)
        assert words["zh"][c.key]["section"] and words["en"][c.key]["section"], c.key
    for c in tutorials:
        heading_zh, heading_en = words["zh"][c.key]["section"], words["en"][c.key]["section"]
        assert heading_en and heading_en.replace(" › ", "").isascii(), c.key
        text = (seeds / c.seeds[0]).read_text(encoding="utf-8")
        for part in re.split(r" › |：", heading_zh):  # each level of the heading (and a question's words) is there
            assert part in text, (c.key, part)


def test_select_filters_by_verdict_and_topic_and_groups_by_topic():
    results = {
        i: claims.Checked(i, "holds" if i % 2 else "does_not_hold", {}, None, {})
        for i in (c.id for c in claims.CLAIMS)
        if i not in SLOW
    }
    everything = claims.select(results)
    assert [c.topic for c in everything.shown] == sorted((c.topic for c in claims.CLAIMS), key=claims.TOPICS.index)
    assert len(everything.shown) == 53 and everything.unplaced == ()
    held = claims.select(results, verdict="holds")
    assert {c.id for c in held.shown} == {i for i in results if i % 2} and {c.id for c in held.unplaced} == SLOW
    formats = claims.select(results, verdict="does_not_hold", topic="formats")
    assert [c.id for c in formats.shown] == [4, 6, 20, 22, 32, 40, 42, 102, 104] and formats.unplaced == ()
    training = claims.select(results, topic="training")
    assert [c.id for c in training.shown] == [8, 9, 17, 18, 19, 29, 30, 35, 36, 48, 49]
    for bad in ({"verdict": "maybe"}, {"topic": "<b>x</b>"}):
        with pytest.raises(ConfigError) as e:
            claims.select(results, **bad)
        assert e.value.field == next(iter(bad))


def test_a_verdict_comes_from_its_parts_per_device_where_they_name_one():
    P = claims.Part
    assert claims.judged(1, [P("a", True), P("b", True)], None, {}).verdict == "holds"
    assert claims.judged(1, [P("a", True), P("b", False)], None, {}).verdict == "partly_holds"
    r = claims.judged(1, [P("a", True, "cpu"), P("a", False, "cuda")], None, {})
    assert r.verdict == "depends_on_device" and r.device_verdicts == {"cpu": "holds", "cuda": "does_not_hold"}
    assert claims.verdict_counts([r]) == dict.fromkeys(claims.VERDICTS, 0) | {"depends_on_device": 1}
    about = claims.judged(1, [P("a", True, "cpu"), P("a", False, "cuda")], None, {}, about="cuda")
    assert about.verdict == "does_not_hold" and about.device_verdicts == r.device_verdicts and about.about == "cuda"


def test_every_fast_verdict_is_a_known_code_and_device_verdicts_combine():
    for c in claims.CLAIMS:
        if c.id in SLOW:
            continue
        r = checked(c.id)
        assert r.claim == c.id and r.verdict in claims.VERDICTS and r.parts, c.key
        assert set(r.device_verdicts.values()) <= set(claims.VERDICTS) - {"depends_on_device"}
        if r.device_verdicts:
            assert set(r.device_verdicts) == set(claims.DEVICES)
            if r.about:  # the device the seed speaks of decides
                assert r.verdict == r.device_verdicts[r.about], c.key
            else:
                assert (r.verdict == "depends_on_device") != (len(set(r.device_verdicts.values())) == 1)
        json.loads(dumps(r))  # strict JSON, evidence included


# ── what autocast does with each op ─────────────────────────────────────────────────────────────────────────
def test_softmax_runs_in_float32_under_cudas_policy_which_the_seed_speaks_of():
    r = checked(1)
    assert r.verdict == "holds" and r.about == "cuda"  # the seed: autocast "picks the precision for CUDA ops"
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "holds"}
    cpu, cuda = r.evidence.on("cpu"), r.evidence.on("cuda")
    assert cpu.probes[0].output_dtype == "bfloat16" and cuda.probes[0].output_dtype == "float32"
    assert cpu.landmarks["probs"] == "bfloat16" and cuda.landmarks["probs"] == "float32"
    assert cpu.categories["aten::softmax.int"] is None  # CPU's policy does not list softmax at all
    assert cuda.categories["aten::softmax.int"] == "fp32_set_opt_dtype"
    assert cpu.low_precision_ops == ("aten._softmax.default",) and cuda.low_precision_ops == ()
    assert cpu.trace_device == "cpu" and cuda.trace_device == "cuda-sim" and cuda.probes[0].fake


def test_matmul_and_linear_run_in_bf16_on_both_devices():
    r = checked(2)
    assert r.verdict == "holds" and r.device_verdicts == {"cpu": "holds", "cuda": "holds"}
    for run in r.evidence.devices:
        assert [p.output_dtype for p in run.probes] == ["bfloat16", "bfloat16"]
        assert set(run.landmarks.values()) == {"bfloat16"}
        assert run.categories["aten::linear"] == run.categories["aten::matmul"] == "lower_precision_fp"
        casts = [s for s in run.probes[0].steps if s.is_cast]
        assert [(s.inputs, s.outputs) for s in casts] == [(("float32",), ("bfloat16",))] * 2


def test_layer_norm_is_float32_under_cuda_only_and_x_norm_is_float32_because_x_is():
    r = checked(3)
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "holds"}
    assert r.verdict == "holds" and r.about == "cuda"  # the seed's example sets device = "cuda"
    cpu, cuda = r.evidence.on("cpu"), r.evidence.on("cuda")
    assert cpu.probes[0].output_dtype == "bfloat16" and cuda.probes[0].output_dtype == "float32"
    assert cpu.categories["aten::layer_norm"] is None and cuda.categories["aten::layer_norm"] == "fp32"
    assert cpu.landmarks == cuda.landmarks == {"x": "float32", "x_norm": "float32"}


def test_the_loss_is_float32_but_cudas_log_softmax_runs_in_bf16():
    r = checked(7)
    assert r.device_verdicts == {"cpu": "holds", "cuda": "partly_holds"}
    assert r.about == "cuda" and r.verdict == "partly_holds"  # the seed's autocast is torch.cuda.amp.autocast
    cpu, cuda = r.evidence.on("cpu"), r.evidence.on("cuda")
    assert cpu.probes[0].output_dtype == cuda.probes[0].output_dtype == "float32"
    assert cpu.categories["aten::cross_entropy_loss"] == "fp32"
    assert cuda.categories["aten::cross_entropy_loss"] is None and cuda.categories["aten::nll_loss"] == "fp32"
    assert cpu.low_precision_ops == () and cuda.low_precision_ops == ("aten._log_softmax.default",)
    assert cpu.landmarks["loss"] == cuda.landmarks["loss"] == "float32"
    # Exactly what differs: the returned dtype is float32 on both, only the internal _log_softmax is not.
    h = r.headline
    assert h["cpu_cross_entropy_out"] == h["cuda_cross_entropy_out"] == "float32"
    assert (h["cpu_log_softmax_dtype"], h["cuda_log_softmax_dtype"]) == ("float32", "bfloat16")
    assert cuda.op_dtypes["aten._log_softmax.default"] == ("bfloat16",)


def test_cpu_autocast_runs_linear_in_bf16_and_fp16():
    r = checked(12)
    assert r.verdict == "does_not_hold"
    assert {p.autocast_dtype: p.output_dtype for p in r.evidence.probes} == {
        "bfloat16": "bfloat16",
        "float16": "float16",
    }
    assert not any(p.fake for p in r.evidence.probes)  # real CPU kernels
    counts = r.evidence.policy_counts
    assert counts["lower_precision_fp"] > 0 and "aten::linear" in device_policy("cpu").categories["lower_precision_fp"]
    assert r.evidence.block_landmarks["q"] == "bfloat16" and r.evidence.cpu_capability


def test_add_sub_mul_relu_gelu_are_on_no_list_and_cat_stack_only_on_cpus():
    r = checked(14)
    assert r.device_verdicts == {"cpu": "partly_holds", "cuda": "does_not_hold"}
    assert r.about == "cuda" and r.verdict == "does_not_hold"  # the seed's script enables autocast on CUDA only
    cpu, cuda = r.evidence.on("cpu"), r.evidence.on("cuda")
    assert {op for op, cat in cpu.categories.items() if cat} == {"aten::cat", "aten::stack"}
    assert cpu.categories["aten::cat"] == cpu.categories["aten::stack"] == "promote"
    assert set(cuda.categories.values()) == {None}
    for run in (cpu, cuda):  # what decides instead: ordinary type promotion, the same with autocast off
        for fn in ("add", "mul"):
            p = run.probe(fn)
            assert p.input_dtypes == ("bfloat16", "float32")
            assert p.output_dtype == p.output_dtype_without_autocast == "float32", (run.device, fn)
        assert run.probe("gelu").output_dtype == run.probe("relu").output_dtype == "bfloat16"
        assert run.landmarks["out"] == "float32"  # float32 x + bf16 attention: the residual promotes


def test_the_seeds_own_fallback_examples_are_float32_under_cudas_policy_only():
    r = checked(15)
    assert r.about == "cuda" and r.verdict == r.device_verdicts["cuda"]  # the seed's script: autocast on CUDA only
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "partly_holds"}
    judged = {d: {s for (_, s) in parts(r, d)} for d in claims.DEVICES}
    assert judged == {"cpu": {"softmax", "layer_norm"}, "cuda": {"softmax", "layer_norm"}}  # the seed's examples
    cpu, cuda = r.evidence.on("cpu"), r.evidence.on("cuda")
    # "falls back to the default precision": on CUDA they are float32 because a list names them, not by default
    for fn, op in (("softmax", "aten::softmax.int"), ("layer_norm", "aten::layer_norm")):
        listed = device_policy("cuda").category_of(op) is not None
        assert parts(r, "cuda")[("returns_fp32", fn)] and parts(r, "cuda")[("falls_back", fn)] is not listed
    assert cpu.probe("softmax").output_dtype == cpu.probe("layer_norm").output_dtype == "bfloat16"
    assert cuda.categories == {"aten::softmax.int": "fp32_set_opt_dtype", "aten::layer_norm": "fp32"}


def test_embedding_output_is_float32_on_both_devices():
    r = checked(16)
    ev = r.evidence
    assert r.verdict == "does_not_hold" and r.device_verdicts == {"cpu": "does_not_hold", "cuda": "does_not_hold"}
    assert ev.outputs == ev.outputs_without_autocast == {"cpu": "float32", "cuda": "float32"}
    assert ev.categories == {"cpu": None, "cuda": None} and ev.fake == {"cpu": False, "cuda": True}


def test_bf16_matmul_accumulates_like_float32_on_cpu_but_cuda_decides_and_returns_bf16():
    r = checked(10)
    ev = r.evidence
    assert r.about == "cuda" and r.verdict == r.device_verdicts["cuda"] == "does_not_hold"
    assert parts(r, "cpu") == {
        ("accumulates_fp32", None): True,
        ("returns_fp32", None): False,
        ("scores_fp32", None): False,
    }
    # the CPU kernel's accumulator says nothing of cuBLAS, which this torch lets reduce in bf16: not judged for CUDA
    assert ("accumulates_fp32", None) not in parts(r, "cuda")
    assert ev.reduced_precision_reduction is torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction
    assert ev.autocast_outputs == {"cpu": "bfloat16", "cuda": "bfloat16"}
    assert ev.spacing_at_one == 2.0**-7 and ev.small / ev.spacing_at_one == 0.25
    assert ev.small == 2.0**-9 and ev.exact == 1 + 255 * 2.0**-9
    assert ev.low_accumulator == 1.0 and ev.rounded_once == 1.5 and ev.measured == 1.5
    assert ev.low_partial_sums[1:] == (1.0,) * (ev.n_small + 1)
    assert ev.accumulator == "float32" and ev.output_dtype == "bfloat16"
    assert ev.random_match["matmul"] > 0.99 > 0.5 > ev.random_match["bfloat16_accumulator"]
    assert ev.score_dtypes == {"cpu": "bfloat16", "cuda": "bfloat16"}


# ── backward and GradScaler ─────────────────────────────────────────────────────────────────────────────────
def test_parameter_grads_are_float32_and_activation_grads_follow_the_forward_dtype():
    r = checked(17)
    assert r.device_verdicts == {"cpu": "partly_holds", "cuda": "partly_holds"} and r.about == "cuda"
    # "activations are fp16" is judged on every activation: x_norm (layer_norm of the float32 x) and out (float32 x +
    # attention) are float32 on both devices, probs too under CUDA's policy
    for device in claims.DEVICES:
        failed = {s for (code, s), ok in parts(r, device).items() if code == "activation_low" and not ok}
        assert failed == {n for n, (fwd, _) in r.evidence.on(device).activations.items() if fwd != "float16"}
        assert {"x_norm", "out"} <= failed
    assert "probs" in {s for (c, s), ok in parts(r, "cuda").items() if c == "activation_low" and not ok}
    for run in r.evidence.devices:
        assert len(run.parameter_grads) == 12 and set(run.parameter_grads.values()) == {"float32"}
        assert all(fwd == grad for fwd, grad in run.activations.values()), run.activations  # backward follows forward
        assert run.activations["q"] == run.activations["logits"] == ("float16", "float16")
    assert r.evidence.on("cpu").activations["probs"] == ("float16", "float16")
    assert r.evidence.on("cuda").activations["probs"] == ("float32", "float32")  # CUDA's softmax: fp32 both ways
    assert r.evidence.on("cuda").trace_device == "cuda-sim"


def test_grad_scaler_under_bf16_scales_by_its_init_scale_and_unscales_to_the_same_update():
    r = checked(18)
    on, off, defaults = r.evidence.enabled, r.evidence.disabled, r.evidence.defaults
    assert r.verdict == "partly_holds"
    assert on.scale == defaults.init_scale == 65536.0
    assert on.loss_ratio == on.grad_ratio == 65536.0  # a power of two: exact in bf16 and float32
    assert on.grads_restored and on.same_update_as_without and on.scale_after_update == 65536.0
    assert off.loss_ratio == off.grad_ratio == 1.0 and off.same_update_as_without  # enabled=False: a true no-op


def test_grad_scaler_skips_in_step_but_backs_off_in_update():
    r = checked(19)
    s = r.evidence
    assert r.verdict == "partly_holds"
    assert parts(r) == {("step_skips", None): True, ("step_lowers_scale", None): False}
    assert s.inf_planted and not s.params_changed_in_step
    assert s.scale == s.scale_after_step == 65536.0 and s.scale_after_update == 32768.0


def test_the_tutorials_amp_calls_are_deprecated_and_one_spelling_raises():
    r = checked(13)
    autocast, scaler, device_type = r.evidence.calls
    assert r.verdict == "partly_holds"
    assert "deprecated" in autocast.deprecation and "torch.amp.autocast('cuda'" in autocast.deprecation
    assert "deprecated" in scaler.deprecation and "torch.amp.GradScaler('cuda'" in scaler.deprecation
    assert device_type.error.startswith("TypeError") and "device_type" in device_type.error
    assert all(c.current for c in r.evidence.replacements)
    assert [claims.api_status(c) for c in r.evidence.calls] == ["deprecated", "deprecated", "error"]


# ── what a format holds ─────────────────────────────────────────────────────────────────────────────────────
def test_quoted_numbers_are_matched_to_the_format_field_they_really_are():
    low, high = (claims.identify_quoted(q) for q in ("1.4e-45", "3.4e38"))
    assert [(m.format, m.field) for m in low.matches] == [("float32", "smallest_subnormal")]
    assert {(m.format, m.field) for m in high.matches} == {("float32", "max"), ("bfloat16", "max")}
    fp16_min = claims.identify_quoted("6.1e-5")
    assert [(m.format, m.field) for m in fp16_min.matches] == [("float16", "smallest_normal")]
    assert fp16_min.digits == 2 and claims.identify_quoted("65504").matches[0].field == "max"


def test_rounding_bins_decide_merging_not_the_gap():
    # Closer than the spacing yet apart; exactly one spacing apart yet merged (fp16 near 10: spacing 2^-7).
    a, b = rounding_bin(10.0039, "float16"), rounding_bin(10.0040, "float16")
    assert a.stored != b.stored and a.hi == b.lo == 10.00390625
    c, d = rounding_bin(10.01171875, "float16"), rounding_bin(10.01953125, "float16")
    assert c.stored == d.stored == 10.015625 and c == d
    assert (c.lo, c.hi) == (10.01171875, 10.01953125)  # both ends are ties, rounded to the even neighbour


def test_bf16_range_is_nearly_but_not_exactly_float32s():
    r = checked(4)
    ev = r.evidence
    assert r.verdict == "partly_holds"
    assert ev.same_smallest_normal and not ev.same_max and not ev.same_smallest_subnormal
    assert 0.99 < ev.max_ratio < 1
    assert ev.subnormal_ratio == 2.0**16  # 23 vs 7 mantissa bits
    assert ev.bfloat16.smallest_subnormal == 2.0**-133 and ev.float32.smallest_subnormal == 2.0**-149
    assert [q.text for q in ev.quoted] == ["1.4e-45", "3.4e38"]


def test_fp16_keeps_1e7_as_a_subnormal():
    r = checked(5)
    assert r.verdict == "does_not_hold"
    assert r.evidence.values == (1e-7,)  # only the value the seed names ("gradient = 1e-7")
    (one_e7,) = r.evidence.claimed.stored
    assert one_e7.value == torch.tensor(1e-7, dtype=torch.float16).item() == 2.0**-23
    assert one_e7.cls == "subnormal" and not one_e7.underflow
    assert r.evidence.claimed.zero_at_or_below == 2.0**-25
    assert r.evidence.claimed.format.smallest_normal == 2.0**-14  # the "6.1e-5 minimum" is the smallest normal
    assert r.evidence.quoted[0].matches[0].field == "smallest_normal"


def test_bf16_keeps_1e7_and_1e8_while_fp16_loses_1e8():
    r = checked(11)
    assert r.verdict == "holds"
    assert all(not e.underflow and e.rel_error < 0.01 for e in r.evidence.claimed.stored)
    fp16 = r.evidence.contrast.stored
    assert not fp16[0].underflow and fp16[1].underflow and fp16[1].value == 0


def test_10_1_and_10_2_stay_distinct_in_fp16_and_10_125_is_bf16s_value_for_10_1():
    r = checked(6)
    assert r.verdict == "does_not_hold"
    pair = r.evidence.pair
    fp16, bf16 = pair.on("float16"), pair.on("bfloat16")
    assert fp16.distinct and fp16.stored == (10.1015625, 10.203125) and fp16.spacing == 2.0**-7
    assert bf16.distinct and bf16.stored == (10.125, 10.1875)
    assert r.evidence.claimed_value_from == (("bfloat16", 10.1),)  # where the tutorial's 10.125 comes from
    lo, hi = pair.bins_in("float16")
    assert lo.hi < hi.lo  # two bins apart
    # 10.1's bin: both ends are ties that round away (to the even neighbour), so the bin is open
    a_ends, _ = pair.ends_in("float16")
    assert float(np.float16(lo.lo)) != lo.stored and float(np.float16(lo.hi)) != lo.stored
    assert (a_ends.lo_in, a_ends.hi_in) == (False, False)


def test_fp16_keeps_10_and_10_01_apart_and_bf16_merges_them():
    r = checked(22)
    pair = r.evidence
    assert r.verdict == "does_not_hold"
    assert pair.on("float16").stored == (10.0, 10.0078125) and pair.on("bfloat16").stored == (10.0, 10.0)
    f16_a, f16_b = pair.bins_in("float16")
    bf_a, bf_b = pair.bins_in("bfloat16")
    assert f16_a != f16_b and (f16_a.lo, f16_a.hi) == (9.99609375, 10.00390625)
    assert bf_a == bf_b and bf_a.lo < 10.0 < 10.01 < bf_a.hi
    assert pair.on("bfloat16").probs == (0.5, 0.5)  # merged: softmax cannot tell them apart


def test_exp_overflows_fp16_past_11_09_and_flushes_e_minus_20_but_not_in_bf16():
    r = checked(20)
    ev = r.evidence
    fp16, bf16 = ev.on("float16"), ev.on("bfloat16")
    assert r.verdict == "holds"
    assert math.isinf(fp16.results[0]) and fp16.results[1] == 0.0
    assert math.isfinite(bf16.results[0]) and bf16.results[1] > 0  # e^-20 ≈ 2.06e-9 survives in bf16
    assert fp16.thresholds.overflow_from == 11.09375 and fp16.thresholds.largest_finite_input == 11.0859375
    assert ev.exact[1] < rounding_bin(2.0**-24, "float16").lo  # below half fp16's smallest subnormal
    assert [(m.format, m.field) for m in ev.quoted_max.matches] == [("float16", "max")]


def test_70000_is_inf_in_fp16_and_70144_in_bf16():
    r = checked(21)
    ev = r.evidence
    big, example = ev.claimed.stored
    assert r.verdict == "holds"  # the seed says "represented normally", not "exactly"
    assert ev.contrast.stored[0].cls == "inf" and big.value == 70144.0 and big.cls == "normal" and big.ulp == 512
    assert example.value == 1.234375
    assert set(parts(r)) == {("fp16_overflows", None), ("bf16_finite", None), ("bf16_example_as_stated", None)}


# ── the seed claims added last ──────────────────────────────────────────────────────────────────────────────
def returned(r: claims.Checked) -> dict[tuple[str, str], str | None]:
    """(device, function) → the dtype the call returned under bf16 autocast."""
    return {(row.device, row.call.function): row.returned for row in r.evidence.rows}


def test_a_float32_by_bf16_matmul_is_cast_down_not_run_as_fp32_x_bf16():
    r = checked(23)
    assert r.verdict == "does_not_hold" and returned(r) == {
        ("cpu", "matmul"): "bfloat16",
        ("cuda", "matmul"): "bfloat16",
    }
    assert {row.category for row in r.evidence.rows} == {"lower_precision_fp"}
    with pytest.raises(RuntimeError) as refused:  # with autocast off torch refuses the mixed call: no dtype to show
        torch.matmul(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.bfloat16))
    cpu = r.evidence.row("matmul", "cpu")
    assert cpu.returned_without_autocast is None and str(refused.value).splitlines()[0] in cpu.error_without_autocast


def test_mean_and_trig_stay_in_the_arriving_dtype_except_cudas_tan():
    r = checked(24)
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "partly_holds"}
    assert r.about == "cuda" and r.verdict == "partly_holds"  # the seed writes device_type='cuda'
    assert [f for (d, f), out in returned(r).items() if out == "float32"] == ["tan"]  # and only under CUDA's policy
    assert r.evidence.row("tan", "cuda").category == "fp32"


def test_sum_is_float32_only_under_cudas_policy():
    r = checked(25)
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "holds"}
    assert r.about == "cuda" and r.verdict == "holds"  # the seed's script enables autocast on CUDA only
    assert (
        r.evidence.row("sum", "cuda").category == "fp32_set_opt_dtype" and r.evidence.row("sum", "cpu").category is None
    )


def test_the_seeds_op_lists_hold_under_cudas_policy_but_not_on_cpu():
    r = checked(26)
    out = returned(r)
    for device in claims.DEVICES:
        assert out[(device, "bmm")] == out[(device, "conv1d")] == "bfloat16"
    assert [out[("cuda", f)] for f in ("group_norm", "log", "pow")] == ["float32"] * 3
    assert [out[("cpu", f)] for f in ("group_norm", "log", "pow", "gru_cell")] == ["bfloat16"] * 3 + ["float32"]
    cuda_gru = r.evidence.row("gru_cell", "cuda")  # CUDA's fused GRU kernel has no fake-tensor version: not judged
    assert cuda_gru.category == "lower_precision_fp"
    assert (cuda_gru.error is None) == (("returns", "gru_cell") in parts(r, "cuda"))
    assert r.device_verdicts["cpu"] == "partly_holds"
    assert r.about == "cuda" and r.verdict == r.device_verdicts["cuda"]  # the seed's script: autocast on CUDA only


def test_activations_stay_bf16_except_softplus_under_cudas_policy():
    r = checked(27)
    assert r.device_verdicts == {"cpu": "holds", "cuda": "partly_holds"}
    assert r.about == "cuda" and r.verdict == "partly_holds"  # the seed's autocast is torch.cuda.amp.autocast
    assert [f for (d, f), out in returned(r).items() if out != "bfloat16"] == ["softplus"]
    assert r.evidence.row("softplus", "cuda").category == "fp32"


def test_this_torch_registers_autocast_kernels_for_mps_and_casts_linear_down():
    r = checked(28)
    ev = r.evidence
    assert r.verdict == "holds" and ev.registered["mps"] > 0 and ev.default_dtype == "float16"
    assert ev.probes[0].output_dtype == "float16" and ev.probes[0].fake


def test_grad_scaler_defaults_are_read_from_a_real_grad_scaler():
    r = checked(29)
    assert r.verdict == "holds"
    assert r.headline == {"init_scale": 65536.0, "growth_factor": 2.0, "growth_interval": 2000, "backoff_factor": 0.5}


def test_bf16_autocast_does_not_halve_the_bytes_a_step_holds():
    r = checked(30)
    ev = r.evidence
    assert r.verdict == "does_not_hold"
    assert 0.5 < ev.saved_ratio < 1 and ev.parameter_ratio == 1.0  # weights stay float32; their casts are saved too
    assert ev.policy == "cpu" and device_policy(ev.policy).category_of("aten::softmax.int") is None  # CPU's policy
    assert ev.runs[0].parameter_bytes == 4 * sum(p.numel() for p in build(ev.block)[0].parameters())


def test_torch_cuda_amp_autocast_without_a_dtype_is_float16_but_the_forward_is_not_all_fp16():
    r = checked(31)
    assert r.verdict == "partly_holds" and r.evidence.cuda_amp_autocast == "float16"
    assert parts(r) == {
        ("default_fp16", None): True,
        ("forward_makes_fp16", None): True,
        ("whole_forward_fp16", None): False,  # autocast keeps some of the forward in float32
    }
    fp32 = {"layer_norm": "aten::layer_norm", "softmax": "aten::softmax.int"}
    assert {device_policy("cuda").category_of(op) is not None for op in fp32.values()} == {True}
    assert {"x_norm", "probs", "loss"} <= set(r.evidence.other_landmarks)
    assert r.evidence.torch_autocast == {"cuda": "float16", "cpu": "bfloat16"} and r.evidence.deprecation


def test_torch_softmax_subtracts_the_max_where_the_textbook_formula_overflows():
    r = checked(32)
    assert r.verdict == "holds"
    f32 = r.evidence.on("float32")
    assert all(math.isnan(v) for v in f32.textbook) and f32.framework == f32.shifted
    assert f32.framework == pytest.approx(f32.exact, rel=1e-6)


def test_softmax_output_cannot_overflow_fp16():
    r = checked(33)
    assert r.verdict == "does_not_hold" and r.evidence.largest_output == 1.0 and r.evidence.fp16_max == 65504.0


def test_the_loss_division_is_float32_inside_autocast_too():
    r = checked(34)
    assert r.device_verdicts == {"cpu": "partly_holds", "cuda": "partly_holds"}
    assert set(r.headline.values()) == {"float32"}


def test_scaling_the_loss_by_a_power_of_two_leaves_bf16_gradients_bit_for_bit():
    r = checked(35)
    ev = r.evidence
    assert r.verdict == "does_not_hold" and ev.scale == 1024.0
    assert ev.identical == ev.elements > 5000 and ev.error_scaled == ev.error_plain > 0


def test_autocast_not_grad_scaler_makes_the_mixed_matmul_bf16():
    r = checked(36)
    # the seed: "GradScaler和后续操作的工作": the operations that follow are judged too, and they do cast
    assert r.verdict == "partly_holds" and r.device_verdicts == {}
    assert {s: ok for (code, s), ok in parts(r).items() if code == "next_op_casts"} == {"cpu": True, "cuda": True}
    assert {row.category for row in r.evidence.next_layer} == {"lower_precision_fp"}
    assert {x.returned for x in r.evidence.matmul} == {"bfloat16"}
    assert r.evidence.scaled_dtypes == {"float32": "float32", "bfloat16": "bfloat16"}  # scale() keeps the dtype


# ── seed claims carded in the third round ───────────────────────────────────────────────────────────────────
def test_fp16_rounds_values_just_below_its_smallest_subnormal_up_not_to_zero():
    r = checked(37)
    assert r.verdict == "partly_holds"
    tiny = torch.finfo(torch.float16).smallest_normal * 2.0**-10  # fp16's smallest subnormal, 2^-24
    assert [(m.format, m.field, m.value) for m in r.evidence.quoted[0].matches] == [
        ("float16", "smallest_subnormal", tiny)
    ]
    for v, e in zip(r.evidence.values, r.evidence.claimed.stored, strict=True):
        assert e.value == torch.tensor(v, dtype=torch.float16).item()
        assert parts(r)[("becomes_zero", f"{v:g}")] == (e.value == 0) == (v <= tiny / 2)
    assert parts(r)[("becomes_zero", "4e-08")] is False  # above half of it: rounds up to the smallest subnormal


def test_softmax_computes_in_float32_under_cuda_but_is_not_cast_back_to_bf16():
    r = checked(38)
    assert r.about == "cuda" and r.verdict == r.device_verdicts["cuda"] == "partly_holds"
    cuda_out = claims.check(1).evidence.on("cuda").probes[0].output_dtype
    assert parts(r, "cuda") == {("computes_fp32", None): True, ("returns_low", None): cuda_out == "bfloat16"}
    assert parts(r, "cpu") == {("computes_fp32", None): False, ("returns_low", None): True}  # CPU never goes up


def test_autocast_never_casts_a_float32_result_back_to_bf16():
    r = checked(39)
    assert r.verdict == "does_not_hold" and set(parts(r, "cpu")) == {
        ("cast_back", "softmax"),
        ("cast_back", "cross_entropy"),
    }
    for run in r.evidence.devices:  # whatever computed in float32 came back float32
        for p in run.probes:
            assert p.output_dtype != "bfloat16" or not any("float32" in s.outputs for s in p.steps if not s.is_cast)


def test_fp16s_range_is_far_smaller_than_float32s_but_bf16s_is_not():
    r = checked(40)
    assert r.verdict == "partly_holds"
    assert parts(r) == {("far_smaller", "float16"): True, ("far_smaller", "bfloat16"): False}
    for name in ("float32", "float16", "bfloat16"):
        fi = torch.finfo(getattr(torch, name))
        assert r.evidence.on(name).normal_binades == pytest.approx(math.log2(fi.max / fi.smallest_normal))


def test_fp16_holds_1024_values_per_binade_and_bf16_128():
    r = checked(41)
    assert r.verdict == "holds"
    for f in r.evidence.formats:
        assert f.in_one_to_two == f.in_lowest_normal == 2**f.format.mantissa_bits == f.claimed
        assert f.in_one_to_two == round(1 / torch.finfo(getattr(torch, f.format.name)).eps)
        assert f.in_top_subnormal == f.in_one_to_two // 2


def test_all_underflowing_exps_make_the_textbook_softmax_nan_and_torch_subtracts_the_max():
    r = checked(42)
    ev = r.evidence
    assert r.verdict == "holds"
    x = torch.tensor(ev.all_low.scores, dtype=torch.float16)
    assert torch.exp(x).eq(0).all() and torch.isnan(torch.exp(x) / torch.exp(x).sum()).all()
    assert torch.softmax(x, -1).isfinite().all() and ev.shifted_exps == (1.0, 0.0)


def test_default_dtype_and_module_parameters_are_float32():
    r = checked(43)
    assert r.verdict == "holds" and r.evidence.default_dtype == str(torch.get_default_dtype()).removeprefix("torch.")
    assert set(r.evidence.factories.values()) == set(r.evidence.parameters.values()) == {"float32"}


def test_the_blocks_output_from_its_last_linear_is_the_autocast_dtype():
    r = checked(44)
    assert r.about == "cuda" and r.verdict == "holds"
    assert all(r.evidence.logits[d] == {"bfloat16": "bfloat16", "float16": "float16"} for d in claims.DEVICES)
    assert {device_policy(d).category_of("aten::linear") for d in claims.DEVICES} == {"lower_precision_fp"}
    assert {v for d in claims.DEVICES for v in r.evidence.loss[d].values()} == {"float32"}


def test_unlisted_ops_return_their_inputs_dtype_and_listed_ones_are_not_judged():
    r = checked(45)
    assert r.verdict == "holds" and r.about == "cuda"
    judged = {(d, s) for d in claims.DEVICES for (_, s) in parts(r, d)}
    assert ("cuda", "exp(bfloat16)") not in judged and ("cpu", "exp(bfloat16)") in judged  # CUDA lists exp
    for row in r.evidence.rows:
        assert (row.device, f"{row.call.function}({row.call.inputs[0]})") in judged or row.category is not None


def test_exp_is_float32_under_cudas_policy_which_the_seeds_use():
    r = checked(46)
    assert r.about == "cuda" and r.verdict == "holds"
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "holds"}
    assert (
        device_policy("cuda").category_of("aten::exp") == "fp32"
        and device_policy("cpu").category_of("aten::exp") is None
    )


def test_lstm_is_cast_down_under_cudas_policy():
    r = checked(47)
    assert r.about == "cuda" and r.verdict == "holds"
    assert r.evidence.row("lstm_cell", "cuda").category == "lower_precision_fp"
    assert (
        r.evidence.row("lstm_cell", "cpu").category is None and r.evidence.row("lstm_cell", "cpu").returned == "float32"
    )
    for row in r.evidence.rows:  # a call torch refused (oneDNN's bf16 LSTM on some CPUs) is shown, not judged
        assert (row.error is None) == (("returns", row.call.function) in parts(r, row.device))


def test_the_scale_grows_by_count_of_clean_steps_whatever_the_gradients_size():
    r = checked(48)
    ev = r.evidence
    assert r.verdict == "does_not_hold"
    large, small = ev.tracks["large"].scales, ev.tracks["small"].scales
    assert large == small  # the size plays no part
    factor = torch.amp.GradScaler("cpu").get_growth_factor()
    assert large[-1] == large[0] * factor ** (len(large) // ev.growth_interval)
    assert ev.overflow.scales[-1] < ev.overflow.scales[0] and ev.default_growth_interval == 2000


def test_backward_inside_autocast_gives_the_same_gradients_bit_for_bit():
    r = checked(49)
    assert r.about == "cuda" and r.verdict == "holds" and r.device_verdicts == {"cpu": "holds", "cuda": "holds"}
    n_params = sum(1 for _ in build(gradients.BACKWARD_BLOCK)[0].parameters())
    for run in r.evidence.devices:
        assert run.error is None and run.differing == 0 and run.parameters == n_params
        assert run.grad_dtypes == (str(torch.get_default_dtype()).removeprefix("torch."),)  # the parameters' dtype
    assert r.evidence.on("cuda").trace_device == claims.trace_device("cuda")


# ── speed (slow) ────────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.slow
def test_bf16_trains_without_a_scaler_and_fp16_without_one_loses_gradients():
    r = checked(8)
    assert r.verdict == "holds"
    ev = r.evidence
    assert [x.recipe for x in ev.recipes] == ["fp32", "bf16", "fp16+scaler", "fp16"]
    bf16 = ev.recipe("bf16")
    assert not bf16.nonfinite_steps and bf16.diverged_at is None and not bf16.skipped_steps
    assert parts(r) == {("stays_finite", None): True, ("loses_none", None): True}
    assert ev.lost("bf16").lost == ev.lost("fp16+scaler").lost == 0
    assert ev.lost("fp16").lost > ev.nonzero / 4  # loss × 2^-16: fp16 without a scaler flushes many gradients


def test_underflow_is_counted_only_where_the_exact_gradient_is_non_zero():
    nonzero, exact_zero, underflow = grad_scaler.measure_underflow()
    # softmax ignores a shift of a whole row of scores: the key bias's exact gradient is 0, element for element
    assert exact_zero == {"attn.k_proj.bias": 32}
    lost = {u.recipe: u for u in underflow}
    assert lost["bf16"].lost == 0 and lost["fp16+scaler"].lost == 0  # what the old count called bf16's losses
    assert lost["fp16"].lost > 1000 and "attn.k_proj.bias" not in lost["fp16"].lost_by_parameter
    assert nonzero + 32 == sum(p.numel() for p in build(grad_scaler.SMALL_BLOCK)[0].parameters())


@pytest.mark.slow
def test_speed_is_measured_for_every_dtype_relative_to_float32_with_a_spread():
    r = checked(9)
    ev = r.evidence
    assert r.verdict == "inconclusive" and ev.device == "cpu" and ev.claim_device == "cuda"  # a CPU cannot decide
    assert [x.dtype for x in ev.rows] == ["float32", "bfloat16", "float16"]
    assert ev.rows[0].step_speedup == ev.rows[0].matmul_speedup == 1.0
    assert all(x.matmul_ms > 0 and x.step_ms > 0 for x in ev.rows)
    for row in ev.rows:
        assert len(row.step.samples) == len(row.step_speedup_spread.samples) == ev.repeat == claims.SPEED_REPEAT
        assert row.step_speedup_spread.q1 <= row.step_speedup <= row.step_speedup_spread.q3
    assert "gpu_tensor_core_speedup" in ev.cannot_tell and "speed_on_this_cpu" in ev.tells
    assert ev.cpu_capability and r.verdict == claims.speed_verdict(ev) and r.parts == ()
    assert r.headline["bfloat16_step_speedup_iqr"] == (
        ev.rows[1].step_speedup_spread.q1,
        ev.rows[1].step_speedup_spread.q3,
    )


def speed_evidence(bf16: tuple[float, ...], fp16: tuple[float, ...], device: str = "cuda") -> claims.SpeedEvidence:
    """Evidence timed on `device` whose low dtypes had these per-round step speedups (float32 always 1)."""

    def row(dtype: str, ups: tuple[float, ...]) -> claims.SpeedRow:
        spread = Spread.of(ups)
        times = Spread.of([10 / u for u in ups])
        return claims.SpeedRow(dtype, 1.0, times.median, 1.0, spread.median, times, times, spread, spread)

    rows = (row("float32", (1.0,) * len(bf16)), row("bfloat16", bf16), row("float16", fp16))
    return claims.SpeedEvidence(
        device, 2, 256, claims.SPEED_BLOCK, len(bf16), rows, "AVX512", "cuda", ("speed_on_this_cpu",),
        ("gpu_tensor_core_speedup",), claims.MAX_RELATIVE_SPREAD, *claims.quartile_verdicts(rows),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("bf16", "fp16", "verdict"),
    [
        ((2.5, 2.6, 2.7, 2.6, 2.5), (2.2, 2.3, 2.2, 2.4, 2.3), "holds"),
        ((1.5, 1.6, 1.5, 1.4, 1.5), (0.1, 0.1, 0.1, 0.1, 0.1), "partly_holds"),
        ((0.5, 0.6, 0.5, 0.6, 0.5), (0.1, 0.1, 0.1, 0.1, 0.1), "does_not_hold"),
        ((5.06, 1.79, 1.17, 155.0, 2.0), (2.5, 2.5, 2.5, 2.5, 2.5), "inconclusive"),  # the page's old 155×
        ((1.9, 2.1, 1.9, 2.1, 2.0), (2.5, 2.5, 2.5, 2.5, 2.5), "inconclusive"),  # the quartiles straddle 2×
    ],
)
def test_a_speed_verdict_needs_a_spread_narrow_enough_to_decide(bf16, fp16, verdict):
    assert claims.speed_verdict(speed_evidence(bf16, fp16)) == verdict


@pytest.mark.parametrize("ups", [(2.5, 2.6, 2.7, 2.6, 2.5), (0.5, 0.6, 0.5, 0.6, 0.5)])
def test_a_cpu_timing_cannot_decide_a_gpu_speed_claim_whatever_its_numbers(ups):
    assert claims.speed_verdict(speed_evidence(ups, ups, device="cpu")) == "inconclusive"


# ── errors and the CLI ──────────────────────────────────────────────────────────────────────────────────────
def test_unknown_claim_is_a_config_error():
    with pytest.raises(ConfigError) as e:
        claims.claim(99)
    assert e.value.field == "id"


def test_cli_json_for_one_claim(capsys):
    assert main(["claims", "--id", "21", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["autocast_dtype"] == "bfloat16" and len(d["claims"]) == 1
    c = d["claims"][0]
    assert c["id"] == 21 and c["verdict"] == "holds" and c["seeds"] == ["004_9b39a333a37e4e48.txt"]
    assert c["topic"] == "formats" and c["headline"]["bfloat16(70000)"] == 70144.0
    assert {"code": "bf16_finite", "holds": True, "device": None, "subject": None} in c["parts"]
    seed = "004_9b39a333a37e4e48.txt"
    assert c["source_titles"] == [[locale.load(lang, "claims")["sources"][seed] for lang in ("zh", "en")]]
    assert c["section"] == [
        "三、FP16 vs BF16 详细对比 › 3.2 关键区别",
        "3. FP16 vs BF16 in detail › 3.2 Key differences",
    ]


@pytest.mark.slow
def test_cli_json_lists_every_claim_with_its_measurement(capsys):
    assert main(["claims", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["claims"]
    assert [r["id"] for r in rows] == [c.id for c in claims.CLAIMS]
    for r in rows:
        assert r["verdict"] in claims.VERDICTS and r["headline"] and r["evidence"], r["key"]
        assert r["parts"] or r["key"] == "speedup"


def test_cli_table_and_bad_input(capsys):
    assert main(["claims", "--id", "1"]) == 0
    out = capsys.readouterr().out
    assert "holds" in out and "cpu: does_not_hold, cuda: holds" in out
    for args in (["claims", "--id", "99"], ["claims", "--id", "x"]):
        assert main(args) == 2
        bad = capsys.readouterr()
        assert bad.out == "" and len(bad.err.strip().splitlines()) == 1
