"""The fp8 lesson's engine (mpviz/fp8): recipes cross-checked against torchao bit for bit, the block under each
recipe, the outlier control, the real fp8 op in the trace.

torchao is a test dependency (requirements-dev.txt); the app never imports it. Each comparison is of raw bytes:
payloads viewed as uint8, scales viewed as uint8 (e8m0, e4m3) or compared exactly (float32).
"""

from __future__ import annotations

import functools
import json
import math
import sys
import warnings

import pytest
import torch

from mpviz.fp8.block import PROJECTIONS, Fp8Config, run, validate_fp8
from mpviz.fp8.quantize import measure, quantize
from mpviz.fp8.recipes import RECIPE_NAMES, RECIPES
from mpviz.model import AttentionConfig, ConfigError

with warnings.catch_warnings():  # torchao warns about its CUDA kernels on a CPU build, and about enums
    warnings.simplefilter("ignore")
    from torchao.float8.config import ScalingGranularity
    from torchao.float8.float8_scaling_utils import hp_tensor_to_float8_dynamic
    from torchao.float8.float8_training_tensor import LinearMMConfig, hp_tensor_and_scale_to_float8
    from torchao.prototype.mx_formats.mx_tensor import to_mx
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
TORCH_DTYPES = {"float8_e4m3fn": E4M3, "float8_e5m2": E5M2}


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.uint8)


def _inputs() -> list[tuple[str, torch.Tensor]]:
    """Operands of several kinds: plain, with an outlier, tiny values, wide range, the block's real operands."""
    g = torch.Generator().manual_seed(7)
    plain = torch.randn(32, 64, generator=g)
    outlier = plain.clone()
    outlier[3, 5] = 3e4
    tiny = plain * 1e-6
    wide = plain * torch.exp2(torch.randint(-20, 20, (32, 64), generator=g).float())
    return [("plain", plain), ("outlier", outlier), ("tiny", tiny), ("wide", wide)]


@functools.cache
def _block_operands(recipe: str) -> tuple[tuple[str, str, torch.Tensor], ...]:
    """(name, role, given values) of every GEMM operand of the block under `recipe`, outlier 1000."""
    res = run(Fp8Config(recipe=recipe, outlier=1000.0))
    return tuple((name, q.role, given) for name, _, given, q in res.operands[1:])  # [0] is x


def _reference(recipe: str, t: torch.Tensor, role: str, history=()) -> tuple[torch.Tensor, torch.Tensor]:
    """torchao's payload bytes and scale bytes (or float32 scales) for `t` stored as `recipe` stores `role`."""
    r = RECIPES[recipe]
    dtype = TORCH_DTYPES.get(r.element_format(role))
    if recipe == "tensorwise":
        f = hp_tensor_to_float8_dynamic(t, dtype, LinearMMConfig())
        return _bytes(f._data), f._scale
    if recipe == "rowwise":
        f = hp_tensor_to_float8_dynamic(
            t,
            dtype,
            LinearMMConfig(),
            scaling_granularity=ScalingGranularity.AXISWISE,
            axiswise_dim=-1,
            round_scales_to_power_of_2=True,
        )
        return _bytes(f._data), f._scale
    if recipe == "delayed":  # torchao casts with a given scale: the one the history's amax makes
        amax = torch.tensor(max(history), dtype=torch.float64) if history else t.abs().max().double()
        scale = (torch.finfo(dtype).max / torch.clamp(amax, min=1e-12)).to(torch.float32)
        f = hp_tensor_and_scale_to_float8(t, scale, dtype, LinearMMConfig())
        return _bytes(f._data), f._scale
    if recipe == "mxfp8":
        scale, data = to_mx(t.contiguous(), E4M3, 32)
        return _bytes(data), _bytes(scale)
    n = NVFP4Tensor.to_nvfp4(t.contiguous(), per_tensor_scale=per_tensor_amax_to_scale(t.abs().max()))
    return _bytes(n.qdata), _bytes(n.scale)


def _ours(recipe: str, t: torch.Tensor, role: str, history=()) -> tuple[torch.Tensor, torch.Tensor]:
    q = quantize(t, RECIPES[recipe], role, history)
    payload = q.packed() if recipe == "nvfp4" else _bytes(q.payload)
    scales = q.scales if q.scales.dtype == torch.float32 else _bytes(q.scales)
    return payload, scales


COMPARED: list[int] = []  # bit-exact comparisons made (payload and scales count one each), printed at the end


def _same(recipe: str, t: torch.Tensor, role: str, history=()) -> None:
    mine, theirs = _ours(recipe, t, role, history), _reference(recipe, t, role, history)
    assert torch.equal(mine[0], theirs[0]), f"{recipe} {role}: payload bytes differ"
    assert torch.equal(mine[1].reshape(theirs[1].shape), theirs[1]), f"{recipe} {role}: scales differ"
    COMPARED.append(2)


@pytest.mark.parametrize("recipe", RECIPE_NAMES)
@pytest.mark.parametrize("role", ["input", "weight", "grad_output"])
def test_quantize_equals_torchao_bit_for_bit(recipe, role):
    history = (2.0, 500.0, 3.0) if recipe == "delayed" else ()
    for _, t in _inputs():
        _same(recipe, t, role)
        _same(recipe, t.to(torch.bfloat16), role)
        if history:
            _same(recipe, t, role, history)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", RECIPE_NAMES)
def test_every_operand_of_the_block_equals_torchao(recipe):
    operands = _block_operands(recipe)
    assert len(operands) == 3 * 2 * len(PROJECTIONS)
    for _, role, given in operands:
        _same(recipe, given.contiguous(), role)


def test_bit_exact_comparisons_are_counted():
    """Prints how many bit-exact comparisons the tests above made in this process (a figure for the report)."""
    print(f"\nmeasured figures: {sum(COMPARED)} bit-exact comparisons against torchao", file=sys.stderr)


def test_formats_follow_the_recipes():
    assert RECIPES["tensorwise"].element_format("grad_output") == "float8_e5m2"
    assert RECIPES["mxfp8"].element_format("grad_output") == "float8_e4m3fn"
    q = quantize(torch.randn(4, 64), RECIPES["mxfp8"], "input")
    assert q.scales.dtype == torch.float8_e8m0fnu and q.scales.shape == (4, 2)
    q = quantize(torch.randn(4, 64), RECIPES["nvfp4"], "input")
    assert q.scales.dtype == E4M3 and q.scales.shape == (4, 4) and q.tensor_scale.dtype == torch.float32


def test_stored_values_agree_with_torchao_dequantisation():
    t = _inputs()[1][1]
    n = NVFP4Tensor.to_nvfp4(t, per_tensor_scale=per_tensor_amax_to_scale(t.abs().max()))
    ours = quantize(t, RECIPES["nvfp4"], "input").dequantize()
    torch.testing.assert_close(ours.float(), n.dequantize(torch.float32), rtol=1e-6, atol=0)


def test_outlier_flushes_a_per_tensor_scale_but_only_one_block():
    shares = {}
    for recipe in RECIPE_NAMES:
        res = run(Fp8Config(recipe=recipe, outlier=1e6))
        shares[recipe] = res.tensor("x").underflow
    print(f"\nmeasured figures: underflow share of x at outlier 1e6: {shares}", file=sys.stderr)
    assert shares["tensorwise"] > 0.5  # one scale for the whole tensor: most of it below e4m3's smallest subnormal
    assert shares["mxfp8"] <= 31 / (32 * 64)  # only the outlier's block of 32 can lose anything
    assert shares["rowwise"] <= 63 / (32 * 64)  # only the outlier's row
    # the tour's stop says so: NVFP4 has block scales too, yet its per-tensor scale follows the outlier
    assert shares["nvfp4"] > 10 * max(shares["rowwise"], shares["mxfp8"])
    assert shares["delayed"] == 0  # the history's scale: the outlier saturates instead


def test_delayed_scaling_saturates_an_outlier_the_history_did_not_see():
    x = run(Fp8Config(recipe="delayed", outlier=1e4)).tensor("x")
    assert x.amax_used < x.amax and x.overflow > 0


def test_measure_reports_what_storing_did():
    t = torch.tensor([[1.0, 1e-9, 0.0, 448.0]])
    m = measure("t", None, t, quantize(t, RECIPES["tensorwise"], "input"))
    assert m.amax == 448.0 and m.underflow == pytest.approx(1 / 3) and m.overflow == 0
    assert m.scale_of_amax == 1.0 and m.scale_bits == f"{0x3F800000:032b}"
    assert m.dynamic_range == pytest.approx(math.log2(448.0 / 1e-9))
    assert m.format_dynamic_range == pytest.approx(math.log2(448 / 2**-9))


def test_block_traces_the_real_fp8_op_where_torch_has_it():
    res = run(Fp8Config(recipe="tensorwise"))
    fp8 = [res.trace.events[g.event] for g in res.gemms]
    assert all(e.op == "aten._scaled_mm.default" for e in fp8)
    assert {e.module for e in fp8} == set(PROJECTIONS)
    forward = next(e for e in fp8 if e.phase == "forward")
    assert [i.dtype for i in forward.inputs[:2]] == ["float8_e4m3fn", "float8_e4m3fn"]
    assert [i.shape for i in forward.inputs[2:4]] == [(), ()]  # the two fp32 scales
    backward = [e for e in fp8 if e.phase == "backward"]
    assert backward and all("float8_e5m2" in [i.dtype for i in e.inputs[:2]] for e in backward)
    assert len(res.tensors) == 1 + 6 * len(PROJECTIONS) and res.tensors[0].name == "x"


def test_block_scaled_gemms_are_labelled_emulations():
    res = run(Fp8Config(recipe="mxfp8"))
    assert all(g.emulated and g.op == "aten.mm.default" for g in res.gemms)
    assert all(res.trace.events[g.event].op == "aten.mm.default" for g in res.gemms)
    assert all(g.rel_error < 0.2 for g in res.gemms)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"recipe": "fp4"}, "recipe"),
        ({"outlier": 0.0}, "outlier"),
        ({"outlier": math.inf}, "outlier"),
        ({"outlier": 1e7}, "outlier"),
        ({"outlier": True}, "outlier"),
        ({"attention": AttentionConfig(seq_len=16)}, "seq_len"),
        ({"attention": AttentionConfig(seq_len=32, d_model=48, n_heads=4)}, "d_model"),
    ],
)
def test_config_outside_the_limits_is_refused(change, field):
    with pytest.raises(ConfigError) as e:
        validate_fp8(Fp8Config(**change))
    assert e.value.field == field


def test_cli_prints_each_quantised_tensor(capsys):
    from tests.cli import run_cli

    r = run_cli(capsys, "fp8", "--recipe", "mxfp8", "--outlier", "1000", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    first = doc["tensors"][0]
    assert first["name"] == "x" and first["format"] == "float8_e4m3fn" and first["scale_format"] == "float8_e8m0fnu"
    assert {"amax", "underflow", "overflow", "rel_error", "scale_bits", "dynamic_range"} <= set(first)
    assert all(g["emulated"] for g in doc["gemms"]) and len(doc["tensors"]) == 25
    r = run_cli(capsys, "fp8", "--recipe", "rowwise")
    assert r.returncode == 0 and "aten._scaled_mm.default" in r.stdout
    r = run_cli(capsys, "fp8", "--seq", "16")
    assert r.returncode == 2 and "seq_len" in r.stderr and not r.stdout


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
def test_trace_and_show_a_model_converted_by_torchao(recipe):
    """A Float8 training tensor is a wrapper subclass: events show its payload (fp8) and scale, with the GEMM."""
    import mpviz

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    def model() -> torch.nn.Module:
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32))
        return convert_to_float8_training(m, config=Float8LinearConfig.from_recipe_name(recipe))

    m, x = model(), torch.randn(16, 32)
    with mpviz.trace(m, device="cpu") as t:
        m(x).sum().backward()
    gemms = [e for e in t.events if e.op == "aten.mm.default" and e.phase == "forward"]
    assert [e.module for e in gemms] == ["0", "2"]
    for e in gemms:
        dtypes = [i.dtype for i in e.inputs]
        assert dtypes.count("float8_e4m3fn") == 2 and dtypes.count("float32") == 2  # two payloads, two scales
        assert e.outputs[0].dtype == "float32" and e.outputs[0].stats is not None
    payload = next(o for e in t.events for o in e.outputs if o.dtype == "float8_e4m3fn")
    assert payload.stats is not None and payload.stats.abs_max <= 448
    widget = mpviz.show(model(), x)
    assert "float8_e4m3fn" in json.dumps(widget.bundle)


def test_fp8_claims_are_checked_part_by_part_with_their_sources_named():
    from mpviz import claims
    from mpviz.claims import fp8 as fp8_claims
    from mpviz.presentation.locales import load

    verdicts = {}
    for spec in fp8_claims.CLAIM_SPECS:
        c = claims.claim(spec["id"])
        assert c.seeds[0] in fp8_claims.SOURCES and load("en", "claims")["sources"][c.seeds[0]].isascii()
        r = claims.check(c.id)
        assert r.parts and r.verdict in claims.VERDICTS
        verdicts[c.key] = r.verdict
    # e4m3's eps and e5m2's range are format facts; so is torch 2.13 saturating e4m3 but not e5m2
    assert verdicts["fp8_cast_saturates"] == "partly_holds"
    r = claims.check(104)
    assert r.evidence.e4m3 == (448.0, -448.0) and r.evidence.e5m2[-1] == -math.inf
    r = claims.check(101)
    assert {p.code: p.holds for p in r.parts}["e4m3_more_precise"] and r.evidence.e5m2_range > r.evidence.e4m3_range
    r = claims.check(103)
    assert r.evidence.amax_block_scale == 448.0


def test_cpu_scaled_mm_refuses_block_scales_so_block_recipes_are_emulated():
    """The page says this torch's CPU _scaled_mm takes fp32 scales per tensor or per row, not e8m0 block scales."""
    a, b = torch.randn(32, 64).to(E4M3), torch.randn(32, 64).to(E4M3)
    ones = torch.ones(32, 2).to(torch.float8_e8m0fnu)
    with pytest.raises(ValueError, match="Invalid scaling configuration"):
        torch._scaled_mm(a, b.t(), scale_a=ones, scale_b=ones, out_dtype=torch.float32)
    rows = torch._scaled_mm(a, b.t(), scale_a=torch.ones(32, 1), scale_b=torch.ones(1, 32), out_dtype=torch.float32)
    assert rows.shape == (32, 32)
