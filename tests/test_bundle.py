"""The lesson bundle says what the trace measured: every event, every cast flag, landmark samples equal to the
tensors' first values, a bounded size, and "what to notice" facts that agree with the probed autocast policies."""

import base64
import json

import numpy as np
import pytest
import torch

from mpviz import landmarks
from mpviz.attention import trace_attention
from mpviz.bundle import (
    DEFAULT_BUNDLE_BYTES,
    MAX_BUNDLE_BYTES,
    build_bundle,
    counterpart_device,
    event_keys,
    lesson_bundle,
)
from mpviz.model import AttentionConfig, build
from mpviz.notices import policy_op_name
from mpviz.policy import device_policy

SMALL = AttentionConfig(seq_len=8, d_model=16, n_heads=2)
RUNS = [("cpu", "bf16"), ("cpu", "fp16"), ("cuda-sim", "bf16"), ("cuda-sim", "fp16")]


@pytest.fixture(scope="module", params=RUNS, ids=["-".join(r) for r in RUNS])
def run(request):
    device, dtype = request.param
    result = trace_attention(SMALL, device, dtype)
    other = trace_attention(SMALL, counterpart_device(device), dtype)
    return result, other, build_bundle(result, other).data


def _values(sample: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(sample["values"]), "<f4").reshape(sample["shape"])


def test_every_event_is_the_trace_s(run):
    result, _, b = run
    t = result.trace
    assert b["counts"] == {
        "events": len(t.events),
        "forward": sum(e.phase == "forward" for e in t.events),
        "backward": sum(e.phase == "backward" for e in t.events),
        "casts": sum(e.autocast_cast for e in t.events),
    }
    for e, d, key in zip(t.events, b["events"], event_keys(t), strict=True):
        assert (d["i"], d["phase"], d["module"], d["op"], d["key"]) == (e.index, e.phase, e.module, e.op, key)
        assert (d["cast"], d["cast_for"], d["node"], d["fwd"]) == (
            e.autocast_cast,
            e.autocast_op,
            e.autograd_node,
            e.forward_index,
        )
        assert [(x["dtype"], tuple(x["shape"])) for x in d["in"]] == [(x.dtype, x.shape) for x in e.inputs]
        assert [(x["dtype"], tuple(x["shape"])) for x in d["out"]] == [(x.dtype, x.shape) for x in e.outputs]
        assert d["src"] == [f"param:{s}" if isinstance(s, str) else s for s in e.sources]
        assert d["creates_nonfinite"] == e.creates_nonfinite
        for o, info in zip(d["out"], e.outputs, strict=True):
            assert ("stats" in o) == (info.stats is not None)
            if info.stats is not None:
                assert o["stats"]["numel"] == info.stats.numel and o["stats"]["nan"] == info.stats.nan
    assert b["landmarks"] == dict(sorted(t.landmarks.items(), key=lambda kv: kv[1]))
    assert [s["event"] for s in b["story"]] == [e.index for e in t.story()]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_landmark_samples_are_the_tensors_first_values(dtype):
    b = lesson_bundle(SMALL, "cpu", dtype).data
    kept = landmarks.LandmarkCapture()  # the same run again, keeping every landmark tensor
    model, x, targets = build(SMALL)
    ctx = torch.autocast("cpu", dtype=getattr(torch, dtype))
    with landmarks.recording(kept, model), ctx:
        loss = model(x, targets)
    with landmarks.recording(kept, model):
        loss.backward()
    for name, index in b["landmarks"].items():
        out = b["events"][index]["out"][b["landmark_outputs"][name]]
        got = _values(out["sample"])
        tensor = kept.tensors[name].detach().float()
        m, r, c = got.shape
        want = tensor.reshape(-1, *tensor.shape[-2:])[:m, :r, :c] if tensor.dim() >= 2 else tensor.reshape(1, 1, -1)
        np.testing.assert_array_equal(got, want[..., :c].numpy(), err_msg=name)


@pytest.mark.parametrize("device", ["cpu", "cuda-sim"])
@pytest.mark.parametrize("dtype", ["bf16", "fp16", "off"])
def test_the_default_lesson_fits_its_budget(device, dtype, printout):
    size = len(lesson_bundle(AttentionConfig(), device, dtype).to_json())
    printout(f"bundle bytes, default config, {device} {dtype}: {size:,} (budget {DEFAULT_BUNDLE_BYTES:,})")
    assert size <= DEFAULT_BUNDLE_BYTES


@pytest.mark.slow  # builds the largest allowed lesson (T=512, d=512, H=16)
def test_size_is_bounded_at_the_largest_config(printout):
    largest = len(lesson_bundle(AttentionConfig(seq_len=512, d_model=512, n_heads=16), "cpu", "bf16").to_json())
    printout(f"bundle bytes: largest config {largest:,} (bound {MAX_BUNDLE_BYTES:,})")
    assert DEFAULT_BUNDLE_BYTES < largest <= MAX_BUNDLE_BYTES


def _notices(b: dict, landmark: str) -> dict[str, dict]:
    step = next(s for s in b["story"] if landmark in s["landmarks"])
    return {n["kind"]: n for n in step["notices"]}


def test_notices_agree_with_the_probed_policy(run):
    result, _, b = run
    policy = "cuda" if result.device == "cuda-sim" else "cpu"
    low = result.autocast_dtype
    for step in b["story"]:
        for n in step["notices"]:
            if n["kind"] == "cast_for_policy":
                assert n["policy"] == policy
                assert n["category"] == device_policy(policy).category_of(n["op"])
                want = low if n["category"] == "lower_precision_fp" else "float32"
                assert all(c["to"] == want and b["events"][c["event"]]["cast"] for c in n["casts"]), n
    q = _notices(b, "q")["cast_for_policy"]  # linear is in both devices' lower-precision list
    assert (q["op"], q["category"]) == ("aten::linear", "lower_precision_fp")
    assert {c["input"] for c in q["casts"]} == {"x_norm", "param:attn.q_proj.weight", "param:attn.q_proj.bias"}
    probs = _notices(b, "probs")
    softmax = policy_op_name("aten.softmax.int")
    if policy == "cpu":  # CPU's policy leaves softmax alone: bf16/fp16 in, same out; CUDA's would give float32
        assert probs["runs_in_arriving_dtype"]["dtype"] == low
        other_side = probs["runs_in_arriving_dtype"]["other"]
        assert other_side["category"] == device_policy("cuda").category_of(softmax) == "fp32_set_opt_dtype"
        assert probs["other_device_dtype"] == {
            "kind": "other_device_dtype",
            "policy": "cuda",
            "dtype": "float32",
            "here": low,
        }
    else:  # fp32_set_opt_dtype: autocast passes dtype=float32 and casts nothing; CPU softmax's cast is its own
        assert "cast_for_policy" not in probs
        own = probs["dtype_argument_converted"]
        assert (own["op"], own["category"], own["dtype"]) == (softmax, "fp32_set_opt_dtype", "float32")
        assert (own["cast_from"], own["cast_to"]) == (low, "float32")
        assert probs["other_device_dtype"]["dtype"] == low and probs["other_device_dtype"]["policy"] == "cpu"
    for name in ("scores", "context"):  # matmul is lower_precision_fp on both devices: no policy difference implied
        for n in _notices(b, name).values():
            if n["kind"] == "runs_in_arriving_dtype":
                assert "other" not in n or n["other"]["category"] != device_policy(policy).category_of(
                    n["other"]["op"]
                ), n
            if n["kind"].startswith("listed_arrived"):
                assert n["category"] == device_policy(policy).category_of(n["op"])
                other = device_policy(n["other_policy"]).category_of(n["op"])
                assert (n["kind"] == "listed_arrived_same") == (other == n["category"]), n
    loss = _notices(b, "loss")["cast_for_policy"]  # the loss is upcast on both, by different ops
    assert loss["category"] == "fp32" and loss["casts"][0]["to"] == "float32"
    assert loss["op"] == ("aten::cross_entropy_loss" if policy == "cpu" else "aten::nll_loss")
    out = _notices(b, "out")  # the residual add: float32 x + low-precision attention → promotion, no cast
    assert "cast_for_policy" in out or "type_promotion" in out
    assert _notices(b, "grad_q")["grad_follows_forward"]["dtype"] == low
    upcast = _notices(b, "grad_attn.q_proj.weight")["param_grad_upcast"]
    assert (upcast["from"], upcast["to"]) == (low, "float32")


def test_autocast_off_has_one_notice_and_no_counterpart():
    b = lesson_bundle(SMALL, "cpu", "off").data
    assert b["run"]["autocast_dtype"] is None and b["run"]["counterpart_device"] is None
    assert b["story"][0]["notices"] == [{"kind": "autocast_off"}]
    assert b["counts"]["casts"] == 0
    json.dumps(b, allow_nan=False)  # strict JSON
