"""Every sentence true: each sentence an audit found false or misleading, checked against what torch
and ml_dtypes do here. Where a sentence quotes a number, the test reads the number the way the app does and
checks it against the measurement; where it states a rule, the test measures the rule."""

import math
import signal

import ml_dtypes
import numpy as np
import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from mpviz import claims, formats
from mpviz import kernel_probe as kp
from mpviz.app import text, tour
from mpviz.app.run_config import RunConfig
from mpviz.attention import trace_attention
from mpviz.model import AttentionConfig
from mpviz.model_bundle import trace_model
from mpviz.notices import policy_op_name, story_notices
from mpviz.policy import device_policy
from mpviz.stats import FormatRange

SMALL = AttentionConfig(seq_len=8, d_model=16, n_heads=2)
LANGS = ("en", "zh")


def _stop(stop_id: str) -> tour.Stop:
    return next(s for s in tour.stops() if s.id == stop_id)


def _words(lang: str, stop_id: str) -> dict:
    return text.load(lang, "tour")["stops"][stop_id]


def _notice(lang: str, stop_id: str, rc: RunConfig | None = None) -> str:
    stop = _stop(stop_id)
    rc = rc or RunConfig(AttentionConfig(), "cpu", "bf16")
    return tour.fill(_words(lang, stop_id)["notice"], stop, rc)


# ── 1. bf16_precision: scores merge by rounding bin, not by being closer than half a step ─────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_bf16_precision_stop_quotes_the_rounding_bin_it_measured(lang):
    template = _words(lang, "bf16_precision")["notice"]
    assert "nearest_bin" in tour.fields(template) or "stored[bf16].nearest_bin" in template
    value = _stop("bf16_precision").query["value"]
    enc = formats.encode(value, "bf16")
    low, high = enc.nearest_bin
    assert f"{low:.7g}" in _notice(lang, "bf16_precision") and f"{high:.7g}" in _notice(lang, "bf16_precision")
    # the bin is what rounding does: its edges (ties to even: 10 is even) and everything inside store the value,
    # and two inputs a hair apart across an edge do not merge although they are far closer than half a step
    for x in (low, high, (low + high) / 2):
        assert formats.encode(x, "bf16").value == enc.value
    below, above = math.nextafter(low, -math.inf), math.nextafter(high, math.inf)
    assert formats.encode(below, "bf16").value != enc.value != formats.encode(above, "bf16").value
    assert formats.encode(high, "bf16").value != formats.encode(above, "bf16").value and above - high < enc.ulp / 2


# ── 2. why_scaler: only values at or below half the smallest subnormal become zero ──────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_why_scaler_stop_says_what_rounds_up_and_what_becomes_zero(lang):
    sub = float(ml_dtypes.finfo(np.float16).smallest_subnormal)
    between = 0.75 * sub  # smaller than the smallest positive float16, yet stored as it, not as zero
    assert float(np.float16(between)) == sub and float(np.float16(sub / 2)) == 0.0
    assert FormatRange.of("float16").underflow_at == sub / 2
    rc = RunConfig(AttentionConfig(), "cpu", "fp16")
    notice = tour.fill(_words(lang, "why_scaler")["notice"], _stop("why_scaler"), rc)
    assert f"{sub:.3g}" in notice and f"{sub / 2:.3g}" in notice  # the threshold itself, as measured
    assert not notice.startswith(("It becomes zero", "它会变成零"))
    assert ("half" if lang == "en" else "一半") in notice


# ── 3. fp32_set_opt_dtype: autocast inserts no cast; the emulation's own cast is not autocast's ──────────────
def test_softmax_s_own_cast_is_not_attributed_to_autocast():
    result = trace_attention(SMALL, "cuda-sim", "fp16")
    softmax = "aten::softmax.int"
    assert device_policy("cuda").category_of(softmax) == "fp32_set_opt_dtype"
    cast_for = {policy_op_name(e.autocast_op) for e in result.trace.events if e.autocast_cast and e.autocast_op}
    assert softmax not in cast_for
    probs = story_notices(result, result.trace.landmarks["probs"])
    kinds = {n["kind"]: n for n in probs}
    assert "cast_for_policy" not in kinds
    assert kinds["dtype_argument_converted"]["op"] == softmax


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_fp32_set_opt_dtype_keeps_an_explicit_dtype(lang):
    # measured: torch keeps a dtype the caller passes (CPU autocast lists log_softmax nowhere; the rule is the
    # op's own, and autocast's set_opt_dtype passes float32 only when none was given)
    gloss = text.load(lang, "glossary")["fp32_set_opt_dtype"]["text"]
    assert "dtype=float32" in gloss
    assert ("kept" if lang == "en" else "保留") in gloss
    assert "its inputs are not cast" not in gloss


# ── 4. softmax_on_cuda: torch's softmax subtracts the max, its exp cannot overflow ───────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_softmax_on_cuda_stop_gives_precision_not_overflow_as_the_reason(lang):
    big = torch.tensor([60000.0, 65000.0, 0.0], dtype=torch.float16)  # exp(65000) is far past float16's max
    assert torch.isfinite(torch.softmax(big, -1)).all()  # the max is subtracted first: no exp overflows
    template = _words(lang, "softmax_on_cuda")["notice"]
    assert "exp is where a narrow range runs out" not in template and "最先" not in template
    assert "{formats[fp32].mantissa_bits}" in template and "{formats[fp16].mantissa_bits}" in template


# ── 5. context/scores on CPU bf16: matmul is lower_precision_fp on both devices ──────────────────────────────
def test_uncast_matmul_steps_on_cpu_name_the_same_category_on_both_devices():
    result, other = trace_attention(SMALL, "cpu", "bf16"), trace_attention(SMALL, "cuda-sim", "bf16")
    matmul = "aten::matmul"
    assert device_policy("cpu").category_of(matmul) == device_policy("cuda").category_of(matmul)
    for name in ("scores", "context"):
        notices = story_notices(result, result.trace.landmarks[name], other)
        kinds = {n["kind"]: n for n in notices}
        assert "runs_in_arriving_dtype" not in kinds, notices  # the step's matmul *is* in CPU's policy
        same = kinds["listed_arrived_same"]
        assert (same["op"], same["category"], same["other_policy"]) == (matmul, "lower_precision_fp", "cuda")


# ── 6. claim 7's caption: fp32_set_opt_dtype keeps the dtype cross_entropy passes ────────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_claim_caption_for_fp32_set_opt_dtype_says_an_explicit_dtype_is_kept(lang):
    phrase = text.load(lang, "claims")["category_phrase"]["fp32_set_opt_dtype"]
    # measured (the card's own check): under CUDA's policy log_softmax is fp32_set_opt_dtype, yet cross_entropy's
    # `_log_softmax` runs in bfloat16, because cross_entropy passes its input's dtype and autocast keeps it
    assert device_policy("cuda").category_of("aten::log_softmax.int") == "fp32_set_opt_dtype"
    card = next(c for c in claims.CLAIMS if c.key == "loss_fp32")
    assert card.check().headline["cuda_log_softmax_dtype"] == "bfloat16"
    assert "cross_entropy" in phrase and "computed and returned in float32" not in phrase


# ── 7. scaler hist caption: the underflow threshold is not a torch.finfo field ───────────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_scaler_hist_caption_does_not_claim_torch_finfo_as_its_source(lang):
    fi = torch.finfo(torch.float16)
    r = FormatRange.of("float16")
    assert r.underflow_at not in {getattr(fi, f) for f in dir(fi) if isinstance(getattr(fi, f), float)}
    assert float(np.float16(r.underflow_at)) == 0.0 and float(np.float16(math.nextafter(r.underflow_at, 1))) > 0
    caption = text.load(lang, "scaler")["hist_caption"]
    assert "Read from `torch.finfo" not in caption and "读取自 `torch.finfo" not in caption


# ── 9. overflow_in_trace: only a division makes NaN in that trace ────────────────────────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_overflow_in_trace_names_only_the_arithmetic_that_made_nan(lang):
    q = _stop("overflow_in_trace").query
    cfg = AttentionConfig(softmax=q["softmax"], input_scale=float(q["scale"]))
    t = trace_attention(cfg, q["device"], q["dtype"]).trace
    nan_ops = {
        e.op.split(".")[1] for e in t.events if e.creates_nonfinite and any(o.stats and o.stats.nan for o in e.outputs)
    }
    template = _words(lang, "overflow_in_trace")["notice"]
    assert ("inf / inf" in template) == ("div" in nan_ops)
    assert ("inf − inf" in template) == ("sub" in nan_ops)
    assert "第 {first_nonfinite.event} 个算子" not in template  # a global 0-based id is no ordinal


# ── 10. policy: unlisted ops run as they arrive, but promote and banned ops do not ───────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_policy_stop_names_promote_and_banned(lang):
    cuda = device_policy("cuda")
    assert cuda.categories.get("promote") and cuda.categories.get("banned")  # measured: both are in the policy
    template = _words(lang, "policy")["notice"]
    assert "`promote`" in template and "`banned`" in template
    assert "两份列表里都没有" not in template


# ── 11. ulp: it doubles at every power of two only among the normal numbers ──────────────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_ulp_gloss_excepts_the_subnormals(lang):
    fi = ml_dtypes.finfo(np.float16)
    tiny, sub = float(fi.smallest_normal), float(fi.smallest_subnormal)
    assert formats.encode(tiny / 2, "fp16").ulp == formats.encode(tiny, "fp16").ulp == sub  # no halving below
    gloss = text.load(lang, "glossary")["ulp"]["text"]
    assert ("subnormal" if lang == "en" else "次正规数") in gloss


# ── Chinese: "上限" for what is a range or a divisor ─────────────────────────────────────────────────────────
def test_chinese_fixed_messages_do_not_call_every_limit_an_upper_bound():
    assert "上限" not in text.load("zh", "common")["fixed"]
    assert "上限" not in text.load("zh", "scaler")["fixed"]


# ── round 3 ─────────────────────────────────────────────────────────────────────────────────────────────────
class _Ops(TorchDispatchMode):
    """The ATen ops a call runs, with their input and output dtypes."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[tuple[str, list, list]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        ins = [a.dtype for a in args if isinstance(a, torch.Tensor)]
        outs = [o.dtype for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
        self.ops.append((str(func), ins, outs))
        return out


def _stepper(lang: str) -> dict:
    return text.load(lang, "stepper")["notice"]


# ── dtype_argument_converted: the op's own conversion is no CPU-only fact ───────────────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_own_conversion_notice_names_no_device(lang):
    # measured here: softmax with dtype=float32 converts float16 and bfloat16 input with an `_to_copy` of its
    # own before the float32 kernel. The notice shows wherever a trace finds that conversion (cuda-sim, and a
    # real GPU whose kernel converts first, as CUDA's does for bfloat16): its words may not pin it to a CPU
    for low in (torch.float16, torch.bfloat16):
        with _Ops() as seen:
            torch.softmax(torch.zeros(4, dtype=low), -1, dtype=torch.float32)
        assert ("aten._to_copy.default", [low], [torch.float32]) in seen.ops
    result = trace_attention(SMALL, "cuda-sim", "bf16")
    kinds = {n["kind"] for n in story_notices(result, result.trace.landmarks["probs"])}
    assert "dtype_argument_converted" in kinds
    template = _stepper(lang)["dtype_argument_converted"]
    assert "CPU" not in template


# ── softmax_on_cuda: softmax sums in float32 anyway; a float32 output keeps the probabilities ────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_softmax_on_cuda_stop_does_not_credit_float32_output_with_the_sum(lang):
    n = 4097  # past 2048: a float16 running sum of ones-after-exp stalls at 2048 (2049 is no float16)
    probs = torch.softmax(torch.zeros(n, dtype=torch.float16), -1)
    stalled = np.float16(0)
    for _ in range(n):
        stalled = np.float16(stalled + np.float16(1))
    assert float(stalled) == 2048.0
    assert probs[0].item() == float(np.float16(1 / n)) != float(np.float16(1 / float(stalled)))
    template = _words(lang, "softmax_on_cuda")["notice"]
    assert ("row's sum" if lang == "en" else "这一行的和") not in template
    assert "{formats[fp32].mantissa_bits}" in template and "{formats[fp16].smallest_subnormal:.3g}" in template


# ── SDPA on the CPU: the op converts to float32 inside, computes there, converts back ────────────────────────
@pytest.mark.parametrize("device", ["cpu", "cuda-sim"])
def test_sdpa_step_says_where_its_math_ran(device):
    result = trace_attention(AttentionConfig(seq_len=8, d_model=16, n_heads=2, attention="sdpa"), device, "bf16")
    t = result.trace
    index = t.landmarks["context"]
    notices = {n["kind"]: n for n in story_notices(result, index)}
    listed = next(n for k, n in notices.items() if k.startswith("listed_arrived"))
    sdpa = listed["op"]
    inside = [e for e in t.events if e.within_autocast_op and policy_op_name(e.within_autocast_op) == sdpa]
    bmm_dtypes = {e.outputs[0].dtype for e in inside if e.op == "aten.bmm.default"}
    assert listed["dtype"] == "bfloat16" and bmm_dtypes == {"float32"}  # measured: the math ran in float32
    converts = notices["op_converts_inside"]
    assert (converts["from"], converts["to"], converts["back_to"]) == ("bfloat16", "float32", "bfloat16")
    assert converts["count"] == 3 and converts["compute_op"] == "aten.bmm.default"
    for lang in LANGS:  # no listed_arrived sentence says its compute op *ran in* the arriving dtype
        for kind in ("listed_arrived_same", "listed_arrived_here_only", "listed_arrived"):
            assert "ran in {dtype}" not in _stepper(lang)[kind] and "以 {dtype} 运行" not in _stepper(lang)[kind]
        assert "{to}" in _stepper(lang)["op_converts_inside"]


# ── promote: one dtype, float32 or the autocast dtype; float64 ignored; another low dtype raises ─────────────
PROMOTE_TEXTS = (("glossary", ("promote", "text")), ("policy", ("category_help", "promote")))


@pytest.mark.parametrize("lang", LANGS)
def test_promote_is_described_as_autocast_does_it(lang):
    assert device_policy("cpu").category_of("aten::cat") == "promote"
    for low, other in ((torch.bfloat16, torch.float16), (torch.float16, torch.bfloat16)):
        with torch.autocast("cpu", dtype=low):
            assert torch.cat([torch.ones(1, dtype=low), torch.ones(1)]).dtype == torch.float32
            assert torch.cat([torch.ones(1, dtype=low), torch.ones(1, dtype=torch.float64)]).dtype == torch.float64
            with pytest.raises(RuntimeError, match="prioritize"):  # not "the widest": it refuses
                torch.cat([torch.ones(1, dtype=other), torch.ones(1, dtype=other)])
    for table, path in PROMOTE_TEXTS:
        words = text.load(lang, table)
        for key in path:
            words = words[key]
        assert "widest" not in words and "最宽" not in words, (table, words)
        assert "float64" in words
    assert "float16" in text.load(lang, "glossary")["promote"]["text"]  # the case that raises
    for template in (_words(lang, "policy")["notice"], text.load(lang, "policy")["intro"]):
        assert "widest" not in template and "最宽" not in template
    assert "float64" in _words(lang, "policy")["notice"]


# ── autocast / cast: not every listed op gets a cast ───────────────────────────────────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_autocast_and_cast_glosses_except_the_dtype_argument_ops(lang):
    result = trace_attention(SMALL, "cuda-sim", "fp16")
    softmax = "aten::softmax.int"
    assert device_policy("cuda").category_of(softmax) == "fp32_set_opt_dtype"  # listed …
    cast_for = {policy_op_name(e.autocast_op) for e in result.trace.events if e.autocast_cast and e.autocast_op}
    assert softmax not in cast_for  # … yet autocast cast nothing for it
    gloss = text.load(lang, "glossary")
    for term in ("autocast", "cast"):
        words = gloss[term]["text"]
        assert "`dtype`" in words, term
        assert "inserts the casts to get there" not in words and "自动插入所需的类型转换" not in words


# ── ulp: the step first doubles above twice the smallest normal ─────────────────────────────────────────────
@pytest.mark.parametrize("lang", LANGS)
def test_ulp_gloss_says_where_the_step_first_doubles(lang):
    for fmt in ("fp16", "bf16"):
        fi = ml_dtypes.finfo(np.float16 if fmt == "fp16" else ml_dtypes.bfloat16)
        tiny, sub = float(fi.smallest_normal), float(fi.smallest_subnormal)
        assert formats.encode(tiny, fmt).ulp == sub  # at the smallest normal itself the step has not doubled
        assert formats.encode(2 * tiny, fmt).ulp == 2 * sub  # the first doubling: twice the smallest normal
    gloss = text.load(lang, "glossary")["ulp"]["text"]
    assert ("above the smallest normal" if lang == "en" else "最小正规数以上") in gloss
    assert ("twice the smallest normal" if lang == "en" else "最小正规数的两倍") in gloss


# ── labels on your own model: a tensor is named for what made it ────────────────────────────────────────────
def test_a_module_that_passes_its_input_through_names_nothing():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).eval()
    x = torch.randn(2, 4, 16)
    assert layer.dropout(x) is x  # measured: Dropout in eval mode hands back its input, it makes nothing
    t, _, _ = trace_model(layer, (x,), device="cpu", dtype="bf16", reference=False)
    for name, index in t.landmarks.items():
        e = t.events[index]
        if e.phase == "forward":  # made inside the module it is named for
            assert e.module == name or e.module.startswith(name + "."), (name, e.op, e.module)
    assert not {"dropout", "dropout1", "dropout2"} & set(t.landmarks)


class _Gate(nn.Module):
    def forward(self, x, *, skip=None):
        return x if skip is None else skip  # hands back what it was given by keyword


class _KeywordPass(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj, self.gate = nn.Linear(8, 8), _Gate()

    def forward(self, x):
        h = torch.relu(self.proj(x))
        return self.gate(x, skip=h)


def test_a_module_that_passes_a_keyword_input_through_names_nothing():
    model, x = _KeywordPass(), torch.randn(2, 8)
    t, _, _ = trace_model(model, (x,), device="cpu", dtype="bf16", reference=False)
    assert "gate" not in t.landmarks and "proj" in t.landmarks
    relu = next(e for e in t.events if e.op == "aten.relu.default")
    assert relu.landmark is None  # the relu made it; its op names it


# ── kernels_capped: what the cap did to the numbers is what the probe measured ──────────────────────────────
def _capped_notice(monkeypatch, first: dict, capped: dict, lang: str = "en") -> tuple[kp.KernelProbe, str]:
    """The probe's outcome for these two child runs (default, then under the cap) and the notice the pages show."""
    import mpviz.app.serving.results

    for name in (kp.ISA_ENV, kp.CAPPED_BY_MPVIZ, kp.FAULT_ENV):  # set first, so that the cap it sets is undone
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setattr(kp, "_probed", lambda isa: {"first": first, "capped": capped})  # what was stored
    probe = kp._decide()
    shown: list[str] = []
    monkeypatch.setattr(mpviz.app.serving.results, "ensure_safe_kernels", lambda: probe)
    monkeypatch.setattr(mpviz.app.serving.results.text, "section", lambda name: text.load(lang, name))
    monkeypatch.setattr(mpviz.app.serving.results.st, "info", lambda body, **kw: shown.append(body))
    mpviz.app.serving.results.kernel_notice()
    return probe, " ".join(shown)


def test_kernel_probe_fingerprints_each_kernel_and_sits_on_the_flush_boundary():
    # the probe's bfloat16 products are below float32's smallest normal (a kernel may flush them), their sum is not
    tiny32 = torch.finfo(torch.float32).tiny
    assert 2.0**-130 < tiny32 < 256 * 2.0**-130 == 2.0**-122
    assert torch.tensor(2.0**-122, dtype=torch.bfloat16).item() == 2.0**-122
    dot = (torch.full((1, 256), 2.0**-65, dtype=torch.bfloat16) @ torch.full((256, 1), 2.0**-65).bfloat16()).item()
    assert dot in (0.0, 2.0**-122)  # which one is the kernel's choice: the reason results are compared
    run = kp._probe_child(None)  # a real child: every kernel finished and left a hash of its result bits
    assert run["ok"] and set(run["results"]) == {f"{k} {d}" for d in kp.DTYPES for k in kp.KERNELS}
    assert kp.compare_results(run, run) == (tuple(run["results"]), ())


@pytest.mark.parametrize("lang", LANGS)
def test_kernels_capped_never_says_the_numbers_are_the_same_unmeasured(monkeypatch, lang):
    crash = {"ok": False, "signal": int(signal.SIGILL), "kernel": "matmul bfloat16", "error": None}
    fine = {"ok": True, "signal": None, "kernel": None, "error": None}
    hashes = {"matmul bfloat16": "a", "softmax bfloat16": "b"}
    # crashed in its first kernel: nothing compared, and the notice says so instead of "the numbers are the same"
    probe, shown = _capped_notice(monkeypatch, {**crash, "results": {}}, {**fine, "results": hashes}, lang)
    assert probe.compared == () and shown
    assert "The numbers are the same" not in shown and "数值不变" not in shown
    assert shown.startswith(text.load(lang, "common")["kernels_capped"].split("{")[0])
    # the default finished matmul before crashing in softmax: compared, the same bits
    first = {**crash, "kernel": "softmax bfloat16", "results": {"matmul bfloat16": "a"}}
    probe, shown = _capped_notice(monkeypatch, first, {**fine, "results": hashes}, lang)
    assert probe.compared == ("matmul bfloat16",) and probe.differed == ()
    assert shown.startswith(text.load(lang, "common")["kernels_capped_same"].split("{")[0]) and "matmul" in shown
    # … other bits under the cap: the notice says the numbers changed, and where
    probe, shown = _capped_notice(monkeypatch, first, {**fine, "results": {**hashes, "matmul bfloat16": "z"}}, lang)
    assert probe.differed == ("matmul bfloat16",)
    assert shown.startswith(text.load(lang, "common")["kernels_capped_differ"].split("{")[0]) and "matmul" in shown
