"""GradScaler engine: real torch.amp.GradScaler behaviour, measured step by step."""

import contextlib
import io
import itertools
import json
import math
from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mpviz import scaler
from mpviz.__main__ import main
from mpviz.model import AttentionConfig, ConfigError
from mpviz.stats import FormatRange

SMALL = AttentionConfig(seq_len=8, d_model=32, n_heads=4)  # fp16 on CPU is slow: keep runs tiny


def fresh_gradscaler_settings() -> tuple:
    s = torch.amp.GradScaler("cpu")
    return s.get_scale(), s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval()


def small(**changes) -> scaler.TrainConfig:
    return scaler.TrainConfig(**{"model": SMALL, **changes})


def with_scaler(**changes) -> scaler.ScalerSettings:
    return replace(scaler.ScalerSettings.defaults(), **changes)


def cli_json(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return json.loads(out.getvalue())


# ── defaults ────────────────────────────────────────────────────────────────────────────────────────────────
def test_reported_defaults_equal_a_fresh_gradscaler():
    d = scaler.ScalerSettings.defaults("cpu")
    assert (d.init_scale, d.growth_factor, d.backoff_factor, d.growth_interval) == fresh_gradscaler_settings()
    assert scaler.TrainConfig().scaler == d
    assert scaler.run(small(steps=1)).defaults == d


def test_cli_json_has_the_documented_shape_and_a_fresh_scaler_s_defaults():
    out = cli_json(
        "scaler",
        "--device",
        "cpu",
        "--dtype",
        "fp16",
        "--steps",
        "3",
        "--seq",
        "8",
        "--dim",
        "32",
        "--inject-inf",
        "1",
        "--json",
    )
    d = out["defaults"]
    assert (d["init_scale"], d["growth_factor"], d["backoff_factor"], d["growth_interval"]) == (
        fresh_gradscaler_settings()
    )
    keys = {
        "step",
        "scale_before",
        "scale_after",
        "found_inf",
        "skipped",
        "growth_tracker",
        "loss",
        "grad_norm",
        "zero_grad_fraction",
        "zero_grad_fraction_unscaled",
    }
    assert [s["step"] for s in out["steps"]] == [0, 1, 2]
    assert keys <= set(out["steps"][1])
    assert out["steps"][1]["found_inf"] and out["steps"][1]["skipped"]
    assert out["steps"][1]["grad_norm"] == "inf"  # strict JSON: inf is a string


# ── the scaler's state machine, measured ────────────────────────────────────────────────────────────────────
def test_injected_inf_is_found_the_step_skipped_and_the_scale_backs_off():
    k = 3
    quiet = with_scaler(init_scale=2.0**8)  # low enough that no gradient overflows on its own
    records = scaler.run(small(steps=6, inject_inf=(k,), scaler=quiet)).steps
    r = records[k]
    assert r.injected and r.found_inf and r.skipped  # skipped = parameters bit-for-bit unchanged
    assert r.scale_after == r.scale_before * quiet.backoff_factor == r.scale_before / 2
    assert r.growth_tracker == 0 and r.scale_change == "backoff"
    assert not math.isfinite(r.grad_norm)
    for other in records[:k] + records[k + 1 :]:
        assert not (other.injected or other.found_inf or other.skipped)
        assert other.scale_after == other.scale_before


def test_scale_doubles_after_growth_interval_clean_steps():
    interval = 3
    records = scaler.run(small(steps=7, scaler=with_scaler(init_scale=2.0**8, growth_interval=interval))).steps
    assert not any(r.skipped for r in records)
    assert [r.growth_tracker for r in records] == [1, 2, 0, 1, 2, 0, 1]
    for r in records:
        grows = (r.step + 1) % interval == 0
        assert r.scale_after == (2 * r.scale_before if grows else r.scale_before)
        assert r.scale_change == ("grow" if grows else "hold")
    assert records[-1].scale_after == 2.0**8 * 4


@settings(max_examples=8, deadline=None)
@given(st.sets(st.integers(0, 5), max_size=3))
def test_every_injected_step_is_skipped_and_only_those(inject):
    cfg = small(steps=6, inject_inf=tuple(sorted(inject)), scaler=with_scaler(init_scale=2.0**8))
    records = scaler.run(cfg).steps
    for r in records:
        assert r.skipped == r.found_inf == (r.step in inject)
        assert r.scale_after == (r.scale_before * 0.5 if r.step in inject else r.scale_before)
    for before, after in itertools.pairwise(records):
        assert after.scale_before == before.scale_after


def test_bf16_without_a_scaler_skips_no_step():
    records = scaler.run(small(steps=12, dtype="bf16", scaler=None)).steps
    assert not any(r.skipped or r.found_inf for r in records)
    assert all(r.scale_before is None and r.scale_change == "none" for r in records)
    assert records[-1].loss < records[0].loss  # it trains


def test_without_a_scaler_an_inf_is_applied_not_skipped():
    records = scaler.run(small(steps=4, dtype="bf16", scaler=None, inject_inf=(1,))).steps
    assert records[0].params_finite and not records[0].skipped
    assert records[1].found_inf and not records[1].skipped and not records[1].params_finite  # Adam took it in
    assert math.isnan(records[2].loss)
    assert not any(r.skipped for r in records[2:])  # NaN weights stay NaN bit for bit: that is no skip


def test_tiny_loss_multiplier_loses_more_gradient_elements_without_scaling():
    records = scaler.run(small(steps=4, loss_multiplier=2.0**-20)).steps
    unscaled = sum(r.zero_grad_fraction_unscaled for r in records) / len(records)
    scaled = sum(r.zero_grad_fraction for r in records) / len(records)
    assert unscaled > 0.5 > 0.05 > scaled
    # fp16 without a scaler: its own backward is the unscaled one (identical at step 0, same parameters).
    plain = scaler.run(small(steps=4, loss_multiplier=2.0**-20, scaler=None)).steps
    assert plain[0].zero_grad_fraction == records[0].zero_grad_fraction_unscaled
    assert min(r.zero_grad_fraction for r in plain) > 0.5


def test_scaling_moves_gradient_exponents_by_log2_of_the_scale():
    r = scaler.run(small(steps=1)).steps[0]
    shift = round(math.log2(r.scale_before))
    assert [(e + shift, c) for e, c in r.grad_exponents] == list(r.grad_exponents_scaled)
    fp16 = FormatRange.of(torch.float16)
    below = sum(c for e, c in r.grad_exponents if 2.0 ** (e + 1) <= fp16.underflow_at)
    below_scaled = sum(c for e, c in r.grad_exponents_scaled if 2.0 ** (e + 1) <= fp16.underflow_at)
    assert below_scaled < below


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_the_underflow_point_shown_rounds_to_zero_and_the_next_float32_up_does_not(dtype):
    """The page says "at or below {underflow_at} a value rounds to 0": both halves, for float32 gradients."""
    fmt = scaler.format_range(dtype)
    low = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    at = torch.tensor([fmt.underflow_at], dtype=torch.float32)
    above = torch.nextafter(at, torch.tensor([math.inf]))
    assert at.item() == fmt.underflow_at  # exactly representable: half the smallest subnormal
    assert at.to(low).item() == 0.0
    assert above.to(low).item() == fmt.smallest_subnormal


def test_clipping_unscales_first_and_accumulation_runs():
    records = scaler.run(small(steps=4, clip=0.1, accum=2, inject_inf=(2,))).steps
    clean = [r for r in records if not r.injected]
    assert all(r.grad_norm > 0.1 for r in clean)  # reported norm is the unscaled one, before clipping
    assert all(r.grad_norm < 1e3 for r in clean)  # ... not the scaled one (scale 65536)
    assert records[2].found_inf and records[2].skipped


def test_runs_are_deterministic_and_the_generator_is_lazy():
    cfg = small(steps=3)
    a, b = scaler.run(cfg).steps, scaler.run(cfg).steps
    strip = [replace(r, step_ms=0.0) for r in a]
    assert strip == [replace(r, step_ms=0.0) for r in b]
    first = next(iter(scaler.train(cfg)))
    assert replace(first, step_ms=0.0) == strip[0]
    assert len(list(itertools.islice(scaler.train(replace(cfg, steps=500)), 2))) == 2  # no need to run all 500


def test_cuda_sim_runs_under_the_emulated_policy():
    records = scaler.run(small(device="cuda-sim", steps=3, inject_inf=(1,))).steps
    assert [r.skipped for r in records] == [False, True, False]


# ── limits ──────────────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"steps": scaler.TRAIN_LIMITS.max_steps + 1}, "steps"),
        ({"steps": 5, "inject_inf": (5,)}, "inject_inf"),
        ({"accum": 0}, "accum"),
        ({"lr": 0.0}, "lr"),
        ({"loss_multiplier": math.nan}, "loss_multiplier"),
        ({"clip": -1.0}, "clip"),
        ({"device": "tpu"}, "device"),
        ({"dtype": "fp8"}, "dtype"),
        ({"model": AttentionConfig(seq_len=scaler.TRAIN_LIMITS.max_seq_len + 1)}, "seq_len"),
        ({"scaler": with_scaler(init_scale=0.0)}, "init_scale"),
        ({"scaler": with_scaler(growth_interval=0)}, "growth_interval"),
    ],
)
def test_limits_are_enforced_in_the_engine(changes, field):
    with pytest.raises(ConfigError) as e:
        scaler.train(small(**changes))  # raises before the first step, not on iteration
    assert e.value.field == field


@pytest.mark.parametrize(("field", "value"), [("growth_factor", 1.0), ("backoff_factor", 1.0)])
def test_scaler_bounds_are_gradscalers_own(field, value):
    with pytest.raises(AssertionError):
        torch.amp.GradScaler("cpu", **{field: value})
    with pytest.raises(ConfigError) as e:
        scaler.validate_train(small(scaler=with_scaler(**{field: value})))
    assert e.value.field == field


def test_clamp_train_fixes_every_field_it_reports():
    bad = small(steps=10**6, lr=-1.0, inject_inf=(3, 99), scaler=with_scaler(growth_factor=0.5), device="tpu")
    cfg, fixed = scaler.clamp_train(bad)
    assert scaler.validate_train(cfg) is cfg
    assert {e.field for e in fixed} == {"steps", "lr", "inject_inf", "growth_factor", "device"}
    assert cfg.inject_inf == (3,) and cfg.scaler.growth_factor == scaler.ScalerSettings.defaults().growth_factor


def test_cli_bad_input_exits_2_with_one_line(capsys):
    assert main(["scaler", "--steps", "3", "--inject-inf", "7"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["scaler", "--inject-inf", "a,b"]) == 2  # argparse's own error: returned, not a SystemExit
    assert capsys.readouterr().err.count("\n") == 1


# ── recipes and memory ──────────────────────────────────────────────────────────────────────────────────────
def test_recipes_compare_on_the_same_data():
    started = []
    results = scaler.compare_recipes(small(steps=5), on_start=lambda i, name: started.append((i, name)))
    assert [r.recipe for r in results] == list(scaler.RECIPES)
    assert started == list(enumerate(scaler.RECIPES))
    by = {r.recipe: r for r in results}
    assert by["fp16+scaler"].scaler and not by["fp16"].scaler
    assert by["fp32"].skipped_steps == by["bf16"].skipped_steps == ()
    assert all(len(r.losses) == 5 and r.ms_per_step > 0 for r in results)
    assert all(0 < r.memory.backward_peak_bytes <= r.memory.peak_bytes for r in results)
    assert by["fp16"].losses[0] == by["fp16+scaler"].losses[0]  # same params, same first batch
    assert all(r.diverged_at is None for r in results)


def test_fp16_without_a_scaler_loses_gradients_the_scaled_recipe_keeps():
    by = {r.recipe: r for r in scaler.compare_recipes(small(steps=3, loss_multiplier=2.0**-20))}
    assert by["fp16"].mean_zero_grad_fraction > 0.5 > 0.05 > by["fp16+scaler"].mean_zero_grad_fraction
    assert by["fp32"].mean_zero_grad_fraction == 0.0  # its own backward is the reference


def test_half_precision_activations_take_less_memory_than_float32():
    longer = AttentionConfig(seq_len=64, d_model=32, n_heads=4)
    fp32 = scaler.step_memory(scaler.TrainConfig(model=longer, dtype="off", scaler=None))
    fp16 = scaler.step_memory(scaler.TrainConfig(model=longer, dtype="fp16"))
    assert fp16.backward_peak_bytes < fp32.backward_peak_bytes


def test_cli_recipes_json():
    out = cli_json("recipes", "--steps", "3", "--seq", "8", "--dim", "32", "--json")
    assert [r["recipe"] for r in out["recipes"]] == list(scaler.RECIPES)
    assert all(len(r["losses"]) == 3 and r["memory"]["peak_bytes"] > 0 for r in out["recipes"])
