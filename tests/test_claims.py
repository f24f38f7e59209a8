"""mpviz.claims: every tutorial claim's verdict as measured on this machine's torch (CPU build, no GPU)."""

import json
import re
from pathlib import Path

import pytest

from mpviz import claims
from mpviz.__main__ import main
from mpviz.model import ConfigError
from mpviz.serialize import dumps
from mpviz.timing import Spread

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"  # CI runs on a clean clone with ../shared beside it


@pytest.fixture(scope="module")
def measured():
    """Every claim checked once per module (the slow ones included: about two seconds here)."""
    return {c.id: claims.check(c.id) for c in claims.CLAIMS}


def test_claims_are_data_with_unique_ids_keys_and_seed_file_names():
    ids = [c.id for c in claims.CLAIMS]
    assert ids == sorted(set(ids))
    assert len({c.key for c in claims.CLAIMS}) == len(ids)
    for c in claims.CLAIMS:
        assert c.seeds and all(re.fullmatch(r"\d{3}_[0-9a-f]{16}\.txt", s) for s in c.seeds), c.key
    assert {c.id for c in claims.CLAIMS if c.on_demand} == {8, 9}


def test_every_cited_seed_has_a_title_and_every_claim_a_section_read_from_the_source():
    assert SEEDS.is_dir(), f"the seed tutorials must lie beside the checkout: {SEEDS}"
    cited = {s for c in claims.CLAIMS for s in c.seeds}
    assert cited == set(claims.SOURCES)
    for name, (title_zh, title_en) in claims.SOURCES.items():
        text = (SEEDS / name).read_text(encoding="utf-8")
        first_heading = text.splitlines()[0].lstrip("# ").strip()
        assert first_heading in title_zh or first_heading in title_en, name
        assert re.search(r"[\u4e00-\u9fff]", title_zh) and title_en.isascii(), name
    for c in claims.CLAIMS:
        heading_zh, heading_en = c.section
        assert heading_en and heading_en.replace(" › ", "").isascii(), c.key
        text = (SEEDS / c.seeds[0]).read_text(encoding="utf-8")
        for part in re.split(r" › |：", heading_zh):  # each level of the heading (and a question's words) is there
            assert part in text, (c.key, part)


def test_every_verdict_is_a_known_code_and_device_verdicts_combine(measured):
    for r in measured.values():
        assert r.verdict in claims.VERDICTS
        assert set(r.device_verdicts.values()) <= set(claims.VERDICTS) - {"depends_on_device"}
        if r.device_verdicts:
            assert set(r.device_verdicts) == set(claims.DEVICES)
            same = len(set(r.device_verdicts.values())) == 1
            assert (r.verdict == "depends_on_device") != same
    counts = claims.verdict_counts(list(measured.values()))
    assert list(counts) == list(claims.VERDICTS) and sum(counts.values()) == len(claims.CLAIMS)


def test_softmax_runs_in_float32_only_under_cudas_policy(measured):
    r = measured[1]
    assert r.verdict == "depends_on_device"
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "holds"}
    cpu, cuda = r.evidence.on("cpu"), r.evidence.on("cuda")
    assert cpu.probes[0].output_dtype == "bfloat16" and cuda.probes[0].output_dtype == "float32"
    assert cpu.landmarks["probs"] == "bfloat16" and cuda.landmarks["probs"] == "float32"
    assert cpu.categories["aten::softmax.int"] is None  # CPU's policy does not list softmax at all
    assert cuda.categories["aten::softmax.int"] == "fp32_set_opt_dtype"
    assert cpu.low_precision_ops == ("aten._softmax.default",) and cuda.low_precision_ops == ()
    assert cpu.trace_device == "cpu" and cuda.trace_device == "cuda-sim" and cuda.probes[0].fake


def test_matmul_and_linear_run_in_bf16_on_both_devices(measured):
    r = measured[2]
    assert r.verdict == "holds" and r.device_verdicts == {"cpu": "holds", "cuda": "holds"}
    for run in r.evidence.devices:
        assert [p.output_dtype for p in run.probes] == ["bfloat16", "bfloat16"]
        assert set(run.landmarks.values()) == {"bfloat16"}
        assert run.categories["aten::linear"] == run.categories["aten::matmul"] == "lower_precision_fp"
        casts = [s for s in run.probes[0].steps if s.is_cast]
        assert [(s.inputs, s.outputs) for s in casts] == [(("float32",), ("bfloat16",))] * 2


def test_layer_norm_is_float32_under_cuda_only_and_x_norm_is_float32_because_x_is(measured):
    r = measured[3]
    assert r.device_verdicts == {"cpu": "does_not_hold", "cuda": "holds"}
    cpu, cuda = r.evidence.on("cpu"), r.evidence.on("cuda")
    assert cpu.probes[0].output_dtype == "bfloat16" and cuda.probes[0].output_dtype == "float32"
    assert cpu.categories["aten::layer_norm"] is None and cuda.categories["aten::layer_norm"] == "fp32"
    assert cpu.landmarks == cuda.landmarks == {"x": "float32", "x_norm": "float32"}


def test_bf16_range_is_nearly_but_not_exactly_float32s(measured):
    r = measured[4]
    ev = r.evidence
    assert r.verdict == "partly_holds"
    assert ev.same_binades and ev.same_smallest_normal and not ev.same_max and not ev.same_smallest_subnormal
    assert 0.99 < ev.max_ratio < 1
    assert ev.subnormal_ratio == 2.0**16  # 23 vs 7 mantissa bits
    assert ev.bfloat16.smallest_subnormal == 2.0**-133 and ev.float32.smallest_subnormal == 2.0**-149


def test_fp16_keeps_1e7_as_a_subnormal(measured):
    r = measured[5]
    assert r.verdict == "does_not_hold"
    one_e5, one_e7 = r.evidence.claimed.stored
    assert one_e7.value == 2.0**-23 and one_e7.cls == "subnormal" and not one_e7.underflow
    assert one_e5.cls == "subnormal" and 0 < one_e5.rel_error < 0.01
    assert r.evidence.claimed.zero_at_or_below == 2.0**-25
    assert r.evidence.claimed.format.smallest_normal == 2.0**-14  # the "6.1e-5 minimum" is the smallest normal


def test_bf16_keeps_1e7_and_1e8_while_fp16_loses_1e8(measured):
    r = measured[11]
    assert r.verdict == "holds"
    assert all(not e.underflow and e.rel_error < 0.01 for e in r.evidence.claimed.stored)
    fp16 = r.evidence.contrast.stored
    assert not fp16[0].underflow and fp16[1].underflow and fp16[1].value == 0


def test_10_1_and_10_2_stay_distinct_in_fp16_and_even_in_bf16(measured):
    r = measured[6]
    assert r.verdict == "does_not_hold"
    claimed, other = r.evidence.pairs
    fp16, bf16 = claimed.on("float16"), claimed.on("bfloat16")
    assert fp16.distinct and fp16.stored == (10.1015625, 10.203125) and fp16.spacing == 2.0**-7
    assert bf16.distinct and bf16.stored == (10.125, 10.1875)  # the tutorial's 10.125 is bf16's value for 10.1
    assert other.scores == (10.0, 10.01)
    assert other.on("float16").distinct and not other.on("bfloat16").distinct


def test_the_loss_is_float32_but_cudas_log_softmax_runs_in_bf16(measured):
    r = measured[7]
    assert r.device_verdicts == {"cpu": "holds", "cuda": "partly_holds"}
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


def test_bf16_trains_without_a_scaler_and_fp16_without_one_loses_gradients(measured):
    r = measured[8]
    assert r.verdict == "holds"
    ev = r.evidence
    assert [x.recipe for x in ev.recipes] == ["fp32", "bf16", "fp16+scaler", "fp16"]
    bf16, scaled, plain = ev.recipe("bf16"), ev.recipe("fp16+scaler"), ev.recipe("fp16")
    assert not bf16.nonfinite_steps and bf16.diverged_at is None and not bf16.skipped_steps
    assert bf16.mean_zero_grad_fraction <= scaled.mean_zero_grad_fraction < 0.01
    assert plain.mean_zero_grad_fraction > 0.1  # loss × 2^-16: fp16 without a scaler flushes many gradients


def test_speed_is_measured_for_every_dtype_relative_to_float32_with_a_spread(measured):
    r = measured[9]  # a timing: its verdict is shown, not asserted
    ev = r.evidence
    assert r.verdict in claims.VERDICTS and ev.device == "cpu" and ev.claim_device == "cuda"
    assert [x.dtype for x in ev.rows] == ["float32", "bfloat16", "float16"]
    assert ev.rows[0].step_speedup == ev.rows[0].matmul_speedup == 1.0
    assert all(x.matmul_ms > 0 and x.step_ms > 0 for x in ev.rows)
    for row in ev.rows:
        assert len(row.step.samples) == len(row.step_speedup_spread.samples) == ev.repeat == claims.SPEED_REPEAT
        assert row.step_speedup_spread.q1 <= row.step_speedup <= row.step_speedup_spread.q3
    assert "gpu_tensor_core_speedup" in ev.cannot_tell and "speed_on_this_cpu" in ev.tells
    assert ev.cpu_capability and r.verdict == claims.speed_verdict(ev)
    assert r.headline["bfloat16_step_speedup_iqr"] == (
        ev.rows[1].step_speedup_spread.q1,
        ev.rows[1].step_speedup_spread.q3,
    )


def _speed(bf16: tuple[float, ...], fp16: tuple[float, ...]) -> claims.SpeedEvidence:
    """Evidence whose low dtypes had these per-round step speedups (float32 always 1)."""

    def row(dtype: str, ups: tuple[float, ...]) -> claims.SpeedRow:
        spread = Spread.of(ups)
        times = Spread.of([10 / u for u in ups])
        return claims.SpeedRow(dtype, 1.0, times.median, 1.0, spread.median, times, times, spread, spread)

    rows = (row("float32", (1.0,) * len(bf16)), row("bfloat16", bf16), row("float16", fp16))
    return claims.SpeedEvidence(
        "cpu", 2, 256, claims.SPEED_BLOCK, len(bf16), rows, "AVX512", "cuda", (), (), claims.MAX_RELATIVE_SPREAD,
        *claims.quartile_verdicts(rows),
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
    assert claims.speed_verdict(_speed(bf16, fp16)) == verdict


def test_bf16_matmul_accumulates_like_float32_but_returns_bf16(measured):
    r = measured[10]
    ev = r.evidence
    assert r.verdict == "partly_holds"
    assert ev.small == 2.0**-9 and ev.exact == 1 + 255 * 2.0**-9
    assert ev.low_accumulator == 1.0 and ev.rounded_once == 1.5 and ev.measured == 1.5
    assert ev.low_partial_sums[1:] == (1.0,) * (ev.n_small + 1)
    assert ev.accumulator == "float32" and ev.output_dtype == "bfloat16"
    assert ev.random_match["matmul"] > 0.99 > 0.5 > ev.random_match["bfloat16_accumulator"]
    assert ev.score_dtypes == {"cpu": "bfloat16", "cuda": "bfloat16"}


def test_unknown_claim_is_a_config_error():
    with pytest.raises(ConfigError) as e:
        claims.claim(99)
    assert e.value.field == "id"


def test_results_serialise_to_strict_json(measured):
    for r in measured.values():
        json.loads(dumps(r))


def test_cli_json_for_one_claim(capsys):
    assert main(["claims", "--id", "6", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["autocast_dtype"] == "bfloat16" and len(d["claims"]) == 1
    c = d["claims"][0]
    assert c["id"] == 6 and c["verdict"] == "does_not_hold" and c["seeds"] == ["002_8b429bfe48cefe11.txt"]
    assert c["headline"]["fp16_stored"] == [10.1015625, 10.203125]
    assert c["source_titles"] == [list(claims.SOURCES["002_8b429bfe48cefe11.txt"])]


def test_cli_table_and_bad_input(capsys):
    assert main(["claims", "--id", "1"]) == 0
    out = capsys.readouterr().out
    assert "depends_on_device" in out and "cpu: does_not_hold, cuda: holds" in out
    for args in (["claims", "--id", "99"], ["claims", "--id", "x"]):
        assert main(args) == 2
        bad = capsys.readouterr()
        assert bad.out == "" and len(bad.err.strip().splitlines()) == 1
