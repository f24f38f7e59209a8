"""`mpviz.show`: any model's forward and backward as the stepper's bundle, in a notebook widget.

The engine (mpviz.model_bundle) on a tiny Hugging Face GPT-2 built from a config: every op attributed to a real
`named_modules()` path, forward and backward, autocast's casts flagged, every module output and parameter gradient
a landmark with its error against a float64 copy, the bundle valid against the stepper's schema. A model that cannot
run in float64 still gets its bundle and says why it has no errors; the size caps raise in the user's words; the
caller's gradients are left as they were. The widget carries the built stepper as is, and `import mpviz` does not
load it. Then nbclient executes examples/your_model.ipynb as a reader would and the widget state it saved is read
back: the browser gets exactly that bundle.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
import torch
import transformers  # a test dependency (requirements-dev.txt): missing, this module fails loudly
from torch import nn

import mpviz
from mpviz.model_bundle import MAX_EVENTS, SAMPLE_ABOVE, ModelBundleError, default_loss, model_bundle
from mpviz.op_count import OPS_PER_PARAMETER, ops_past_cap
from mpviz.presentation import locales
from mpviz.presentation.palette import DTYPE_COLORS
from mpviz.presentation.stepper_payload import BUILT_JS, asset, stepper_payload, stepper_text
from mpviz.presentation.widget import StepperWidget
from mpviz.stats import SAMPLE_SIZE
from tests.prerequisites import require_python_packages
from tests.test_stepper import bundle_schema

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "your_model.ipynb"
ASSETS = ROOT / "assets" / "components" / "stepper"  # the stepper's sources and node tests
NODE_FIXTURE = ASSETS / "test" / "fixtures" / "model_payload.json"  # the node tests' model (test/treepanel.test.js)


def tiny_gpt2(n_layer: int = 2) -> tuple[nn.Module, torch.Tensor]:
    cfg = transformers.GPT2Config(
        vocab_size=64,
        n_positions=16,
        n_embd=32,
        n_layer=n_layer,
        n_head=2,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
        loss_type="ForCausalLM",
    )
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(cfg).eval(), torch.randint(0, 64, (1, 8))


@pytest.fixture(scope="module")
def gpt2_bundle() -> tuple[nn.Module, dict]:
    model, ids = tiny_gpt2()
    return model, model_bundle(model, [ids], kwargs={"labels": ids}).data


def test_every_op_of_forward_and_backward_sits_in_a_named_module(gpt2_bundle):
    model, b = gpt2_bundle
    names = {name for name, _ in model.named_modules()}
    events = b["events"]
    assert b["counts"]["forward"] > 50 and b["counts"]["backward"] > 50
    assert [e["i"] for e in events] == list(range(len(events)))
    assert {e["module"] for e in events} <= names
    # the blocks' own layers show up in both passes
    for phase in ("forward", "backward"):
        assert {"transformer.h.1.attn.c_attn", "transformer.h.0.mlp.c_fc", "lm_head"} <= {
            e["module"] for e in events if e["phase"] == phase
        }
    assert b["graph"] == {"nodes": [], "edges": []}  # the stepper draws the module tree instead
    jsonschema.validate(b, bundle_schema())


def test_autocasts_casts_are_flagged_and_dtypes_are_those_that_ran(gpt2_bundle):
    _, b = gpt2_bundle
    casts = [e for e in b["events"] if e["cast"]]
    assert casts and b["counts"]["casts"] == len(casts)
    forward = [e for e in casts if e["phase"] == "forward"]
    assert forward and all(e["op"] == "aten._to_copy.default" and e["cast_for"] for e in forward)
    assert {e["out"][0]["dtype"] for e in forward} <= {"bfloat16", "float32"}
    linear = next(e for e in b["events"] if e["module"] == "lm_head" and e["phase"] == "forward" and not e["cast"])
    assert linear["out"][0]["dtype"] == "bfloat16"  # lm_head's matmul ran in bf16 under CPU autocast
    assert {"bfloat16", "float32"} <= set(b["formats"])


def test_modules_and_parameter_gradients_are_landmarks_with_errors_against_float64(gpt2_bundle):
    model, b = gpt2_bundle
    marks = b["landmarks"]
    assert "transformer.h.0.attn" in marks and "lm_head" in marks
    assert "grad_transformer.h.0.attn.c_attn.weight" in marks
    assert all(b["events"][i]["phase"] == "backward" for n, i in marks.items() if n.startswith("grad_"))
    assert [s["event"] for s in b["story"]] == sorted({*marks.values()})
    errors = b["errors"]
    assert "reference_failed" not in b["run"]
    assert {"lm_head", "transformer.h.1.mlp", "grad_transformer.h.1.mlp.c_fc.weight"} <= set(errors)
    # bf16 compute against float64: small, not zero, for a matmul's output
    assert 1e-5 < errors["lm_head"]["rel"] < 0.1
    assert b["run"]["config"]["model"] == "GPT2LMHeadModel"
    assert b["run"]["config"]["parameters"] == sum(p.numel() for p in model.parameters())


class Float32Only(nn.Module):
    """Casts its input to float32 whatever the weight's dtype: fine under autocast, a dtype clash in float64."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.weight = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (self.proj(x).to(torch.float32) @ self.weight).sum()


def test_a_model_that_cannot_run_in_float64_says_so_and_is_still_shown():
    w = mpviz.show(Float32Only(), torch.randn(2, 4))
    b = w.bundle
    assert b["run"]["reference_failed"] == "RuntimeError"
    assert b["errors"] == {}
    assert b["counts"]["forward"] and b["counts"]["backward"]
    jsonschema.validate(b, bundle_schema())
    assert "{error}" in locales.load("en", "stepper")["banner"]["reference_failed"]  # the banner says which


def test_the_size_caps_raise_in_the_readers_words():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(3, 4)
    with pytest.raises(ModelBundleError) as caught:
        model_bundle(model, [x], max_events=5)
    assert caught.value.code == "too_many_events" and caught.value.cap == 5 and caught.value.size == 6
    # mpviz.show streams past the caps (tests/test_notebook_stream.py); stream=False refuses there
    with pytest.raises(ValueError, match=r"more than 5 ops .* at most 5\b.*stream="):
        mpviz.show(model, x, max_events=5, stream=False)
    with pytest.raises(ValueError, match="最多绘制 5 个"):
        mpviz.show(model, x, max_events=5, locale="zh", stream=False)
    with pytest.raises(
        ValueError, match=r"bundle is 0\.\d+ MB; with stream=False mpviz.show sends at most 0\.000954 MB"
    ):
        mpviz.show(model, x, max_bytes=1000, stream=False)


def test_a_model_far_past_the_op_cap_is_refused_before_tracing():
    """A stack of 12,000 Linear layers runs ~190,000 ops: counted untraced (mpviz.op_count) up to the op past the
    cap, it is refused before any tracing (no progress, no float64 run), and the model is left as it was."""
    torch.manual_seed(0)
    model = nn.Sequential(*(nn.Linear(2, 2) for _ in range(12_000)))
    seen = []
    with pytest.raises(ModelBundleError) as caught:
        model_bundle(model, [torch.randn(1, 2)], progress=seen.append)
    assert caught.value.code == "too_many_events" and caught.value.size == MAX_EVENTS + 1
    assert seen == []
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(ValueError, match=r"more than 20,000 ops"):
        mpviz.show(model, torch.randn(1, 2), stream=False)


def test_the_op_count_is_the_traces_and_leaves_the_model_as_it_was():
    """A model with many parameter tensors is counted before tracing: the count is the ops the trace records (one
    below it refuses at exactly that op), and counting touches no running statistic, gradient or random state."""
    torch.manual_seed(0)
    layers = [m for _ in range(40) for m in (nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))]
    model = nn.Sequential(*layers).train()
    x = torch.randn(3, 4)
    ops = model_bundle(model, [x], reference=False).data["counts"]["events"]
    assert sum(1 for _ in model.parameters()) * OPS_PER_PARAMETER > ops  # so the next call counts first
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rng = torch.random.get_rng_state()
    counted = ops_past_cap(model, [x], {}, default_loss, ops - 1, torch.autocast("cpu", dtype=torch.bfloat16))
    assert counted == ops
    assert ops_past_cap(model, [x], {}, default_loss, ops, torch.autocast("cpu", dtype=torch.bfloat16)) is None
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert torch.equal(torch.random.get_rng_state(), rng) and all(p.grad is None for p in model.parameters())


class NoParameters(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2).sum()


def _frozen() -> nn.Module:
    return nn.Linear(4, 2).requires_grad_(False)


@pytest.mark.parametrize(
    "make_model, kwargs, code, words",
    [
        (NoParameters, {}, "nothing_requires_grad", "model.requires_grad_(True)"),
        (_frozen, {}, "nothing_requires_grad", "requires_grad is False"),
        (lambda: nn.Linear(4, 2), {"loss": lambda out: 3}, "bad_loss", "loss= returned int"),
        (lambda: nn.Linear(4, 2), {"loss": lambda out: out.float()}, "bad_loss", "shape=[3, 2]"),
        (lambda: nn.Linear(4, 2), {"device": "cuda:0"}, "no_cuda", "torch.cuda.is_available"),
        (lambda: nn.Linear(4, 2), {"device": "mps"}, "unsupported_device", "not 'mps'"),
        (lambda: nn.Linear(4, 2, device="meta"), {}, "meta_model", "to_empty"),
    ],
    ids=["no-parameters", "frozen", "int-loss", "tensor-loss", "cuda-without-cuda", "mps", "meta"],
)
def test_each_request_mpviz_cannot_trace_gets_one_error_that_names_the_fix(make_model, kwargs, code, words):
    if code == "no_cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    model = make_model()
    with pytest.raises(ModelBundleError) as caught:
        model_bundle(model, [torch.randn(3, 4)], **kwargs)
    assert caught.value.code == code
    with pytest.raises(ValueError, match=re.escape(words)) as shown:
        mpviz.show(model, torch.randn(3, 4), **kwargs)
    assert type(shown.value) is ValueError and isinstance(shown.value.__cause__, ModelBundleError)
    zh = locales.load("zh", "notebook")[code]
    with pytest.raises(ValueError, match=re.escape(zh[:6])):
        mpviz.show(model, torch.randn(3, 4), locale="zh", **kwargs)


def test_progress_reports_phases_and_an_interrupt_leaves_the_model_as_it_was():
    model, ids = tiny_gpt2()
    seen = []
    model_bundle(model, [ids], kwargs={"labels": ids}, progress=seen.append)
    phases = [p.phase for p in seen]
    assert phases[0] == "forward" and {"backward", "reference", "bundle"} <= set(phases)
    assert phases.index("backward") < phases.index("reference") < phases.index("bundle")
    assert all(p.left is not None for p in seen if p.phase != "forward")
    assert [p.ops for p in seen] == sorted(p.ops for p in seen)

    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    head = model.lm_head.weight
    head.grad = torch.ones_like(head)
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)

    def interrupt(p):
        if p.phase == "backward":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        model_bundle(model, [ids], kwargs={"labels": ids}, progress=interrupt)
    assert torch.equal(torch.rand(3), expected)
    assert torch.equal(head.grad, torch.ones_like(head))
    assert all(p.grad is None for n, p in model.named_parameters() if p is not head)
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())
    assert not any(p._backward_hooks for p in model.parameters())
    again = model_bundle(model, [ids], kwargs={"labels": ids}).data  # nothing of the interrupted trace is left
    assert again["counts"] == gpt2_counts(model, ids)


def gpt2_counts(model, ids) -> dict:
    return model_bundle(model, [ids], kwargs={"labels": ids}, reference=False).data["counts"]


def test_the_progress_line_updates_one_output_in_the_readers_words(monkeypatch):
    import IPython.display

    from mpviz.model_bundle import Progress
    from mpviz.presentation.widget import ProgressLine

    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(data["text/plain"])

    def display(data, raw, display_id):
        shown.append(data["text/plain"])
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    line = ProgressLine("en")
    line.live = True  # as inside a kernel
    line(Progress("forward", 40, 0.3, None))  # under a second: nothing shown yet
    assert shown == []
    line(Progress("forward", 900, 1.2, None))
    line(Progress("backward", 2_500, 3.0, 4.4))
    line(Progress("reference", 4_100, 6.0, 1.0))
    line.close(interrupted=True)
    assert shown[0] == "Tracing the forward pass: 900 ops so far, 1.2 s."
    assert shown[1] == "Tracing the backward pass: 2,500 ops so far, 3.0 s, about 4 s left."
    assert "float64" in shown[2] and "4,100" in shown[2]
    assert shown[3].startswith("Interrupted after 4,100 ops") and len(shown) == 4
    zh = ProgressLine("zh")
    assert zh.words["backward"] == locales.load("zh", "notebook")["progress"]["backward"]
    assert not ProgressLine("en").live  # outside a kernel (this test process): no output at all


def test_large_outputs_have_sampled_statistics_and_say_so():
    model = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 4))
    b = model_bundle(model, [torch.randn(300, 512)], dtype="off").data
    out = {e["i"]: e["out"][0] for e in b["events"] if e["out"] and "stats" in e["out"][0]}
    sampled = [o for o in out.values() if "sampled" in o["stats"]]
    exact = [o for o in out.values() if "sampled" not in o["stats"]]
    assert sampled and exact
    assert all(o["stats"]["numel"] > SAMPLE_ABOVE and o["stats"]["sampled"] == SAMPLE_SIZE for o in sampled)
    assert all(o["stats"]["numel"] <= SAMPLE_ABOVE for o in exact)
    jsonschema.validate(b, bundle_schema())


def test_backward_starts_from_the_loss_given_else_one_found_in_the_output():
    class Dict(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> dict:
            y = self.proj(x)
            return {"ids": y.argmax(-1), "logits": y}

    x = torch.randn(2, 4)
    found = model_bundle(Dict(), [x]).data  # the first floating tensor's sum: "ids" is an integer tensor
    given = model_bundle(Dict(), [x], loss=lambda out: out["logits"].float().pow(2).mean()).data
    assert "grad_proj.weight" in found["landmarks"] and "grad_proj.weight" in given["landmarks"]
    ops = {e["op"] for e in given["events"] if e["phase"] == "forward"}
    assert "aten.pow.Tensor_Scalar" in ops and "aten.pow.Tensor_Scalar" not in {e["op"] for e in found["events"]}
    with pytest.raises(ValueError, match="loss="):
        mpviz.show(nn.Sequential(nn.Flatten()), torch.ones(2, 3, dtype=torch.long))


def test_the_callers_gradients_mode_and_random_state_are_left_as_they_were():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 2))
    model.train()
    before = torch.full((4, 4), 7.0)
    model[0].weight.grad = before.clone()
    x = torch.randn(3, 4)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    mpviz.show(model, x, dtype="off")
    assert torch.equal(torch.rand(3), expected)
    assert torch.equal(model[0].weight.grad, before)
    assert model[2].weight.grad is None
    assert model.training
    # the same dropout draws in both runs: the float64 copy's errors stay small
    errors = model_bundle(model, [x], dtype="off").data["errors"]
    assert errors["2"]["rel"] < 1e-6


def test_an_fp16_overflow_is_found_in_the_module_that_made_it():
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
    with torch.no_grad():
        model[2].weight.fill_(300.0)  # fp16's max is 65504: ReLU's outputs (hundreds) times 300, summed, pass it
    b = model_bundle(model, [torch.full((2, 8), 400.0)], dtype="fp16").data
    first = b["events"][b["first_nonfinite"]["event"]]
    assert (first["phase"], first["module"], first["op"]) == ("forward", "2", "aten.addmm.default")
    assert first["out"][0]["dtype"] == "float16" and first["out"][0]["stats"]["posinf"] > 0
    assert b["errors"]["2"]["nonfinite"]  # against float64, which stays finite


def test_the_float64_copy_can_be_skipped():
    b = model_bundle(nn.Linear(4, 2), [torch.randn(3, 4)], reference=False).data
    assert b["errors"] == {} and "reference_failed" not in b["run"]


def test_the_widget_carries_the_built_stepper_as_is_and_an_embedded_payload(gpt2_bundle):
    model, ids = tiny_gpt2(1)
    w = mpviz.show(model, ids)
    assert isinstance(w, StepperWidget)
    assert w._stepper_js == BUILT_JS.read_text(encoding="utf-8")  # the one stepper, not a copy of its code
    assert w._esm == asset("notebook.js") and w._stepper_css == asset("stepper.css")
    payload = json.loads(w.payload)
    assert payload["meta"]["embedded"] == 1 and payload["meta"]["locale"] == "en"
    assert payload["text"]["ui"]["tree"]["label"] == locales.load("en", "stepper")["tree"]["label"]
    zh = json.loads(mpviz.show(model, ids, locale="zh").payload)
    assert zh["text"]["ui"]["tree"]["label"] == locales.load("zh", "stepper")["tree"]["label"]
    assert zh["meta"]["locale"] == "zh"
    with pytest.raises(ValueError, match="no words in 'fr'"):
        mpviz.show(nn.Linear(2, 2), torch.ones(1, 2), locale="fr")


def test_importing_mpviz_loads_neither_anywidget_nor_the_view():
    loaded = "('anywidget', 'streamlit', 'plotly', 'mpviz.presentation', 'mpviz.app')"
    code = f"import sys, mpviz; print(sorted(m for m in {loaded} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ── the node tests' fixture: a small model's payload, as the widget sends it ──────────────────────────────────
class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class Tiny(nn.Module):
    """Embedding, two residual blocks in a ModuleList, a head: nesting three deep, a container that runs nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 16)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def node_fixture_payload() -> bytes:
    torch.manual_seed(0)
    bundle = model_bundle(Tiny(), [torch.randint(0, 16, (1, 4))])
    return stepper_payload(bundle.to_json(), stepper_text(), DTYPE_COLORS, key="node-model", embedded=True)


def test_the_node_fixture_is_this_models_payload():
    """test/treepanel.test.js mounts what the widget sends for Tiny (`python -m tests.test_notebook` rewrites it):
    the same ops in the same modules, the same words; values may differ in the last bits from CPU to CPU."""
    fixture, now = json.loads(NODE_FIXTURE.read_bytes()), json.loads(node_fixture_payload())
    jsonschema.validate(fixture["bundle"], bundle_schema())
    assert {k: v for k, v in fixture.items() if k != "bundle"} == {k: v for k, v in now.items() if k != "bundle"}
    ops = [[(e["phase"], e["module"], e["op"], e["cast"]) for e in p["bundle"]["events"]] for p in (fixture, now)]
    assert ops[0] == ops[1]
    assert fixture["bundle"]["landmarks"] == now["bundle"]["landmarks"]


# ── the example notebook, executed ────────────────────────────────────────────────────────────────────────────
def _widget_bundles(nb) -> list[dict]:
    """The bundles of every anywidget the executed notebook saved (its widget state: what a browser restores)."""
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    out = []
    for model in state.values():
        if model["model_name"] != "AnyModel":
            continue
        (buf,) = [b for b in model.get("buffers", []) if b["path"] == ["payload"]]
        out.append((model["state"], json.loads(base64.b64decode(buf["data"]))))
    return out


@pytest.mark.slow  # a kernel's start and a trace: several seconds
def test_the_example_notebook_runs_and_its_widget_holds_the_gpt2s_ops(printout, tmp_path, monkeypatch):
    require_python_packages("nbclient", "nbformat", "ipykernel")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # the kernel's profile: not the user's
    import nbclient
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - start
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o["output_type"] == "error"]
    traced = next(line for line in text.splitlines() if line.startswith("traced in"))
    ((state, payload),) = _widget_bundles(nb)
    assert state["_stepper_js"] == BUILT_JS.read_text(encoding="utf-8")
    b = payload["bundle"]
    assert b["counts"]["forward"] > 0 and b["counts"]["backward"] > 0 and b["counts"]["casts"] > 0
    modules = {e["module"] for e in b["events"]}
    assert {"transformer.h.0.attn.c_attn", "transformer.h.1.mlp.c_proj", "lm_head"} <= modules
    assert any(e["cast"] and e["op"] == "aten._to_copy.default" for e in b["events"])
    size = len(json.dumps(payload, separators=(",", ":")).encode())
    printout(
        f"examples/your_model.ipynb (GPT-2, 2 blocks, d=64, 16 tokens): {traced}; {b['counts']['events']} ops "
        f"({b['counts']['forward']} forward, {b['counts']['backward']} backward, {b['counts']['casts']} casts); "
        f"payload {size:,} bytes; whole notebook {wall:.1f} s with the kernel's start"
    )


if __name__ == "__main__":  # python -m tests.test_notebook: rewrite the node tests' model fixture
    NODE_FIXTURE.write_bytes(node_fixture_payload())
