"""Issue 17 in the browser: the stepper renders the notices that replaced "autocast inserted a cast" for
fp32_set_opt_dtype ops and "no policy touched this step" for matmul steps, with every placeholder filled; and the
one that says SDPA's kernel computed in float32 although its inputs arrived in low precision."""

import pytest

from mpviz.attention import trace_attention
from mpviz.bundle import build_bundle, counterpart_device
from mpviz.model import AttentionConfig
from tests.browser import APP_IDLE

NOTICES = """(kind) => {
    const host = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]');
    const r = host && host.shadowRoot;
    const li = r && r.querySelector(`.mpv-notices li[data-kind=${kind}]`);
    return li ? li.textContent : null;
}"""


def _story_step(device: str, dtype: str, landmark: str, attention: str = "manual") -> int:
    """Where `landmark` is in the story of the page's run with these settings (the bundle the page builds)."""
    cfg = AttentionConfig(attention=attention)
    b = build_bundle(trace_attention(cfg, device, dtype), trace_attention(cfg, counterpart_device(device), dtype))
    return next(k for k, step in enumerate(b.data["story"]) if landmark in step["landmarks"])


def _notice(browser, server: str, device: str, dtype: str, landmark: str, kind: str, attention="manual") -> str:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    step = _story_step(device, dtype, landmark, attention)
    page.goto(f"{server}/attention?device={device}&dtype={dtype}&attn={attention}&view=story&step={step}")
    page.wait_for_selector(APP_IDLE, timeout=120_000)
    page.wait_for_function(f"() => ({NOTICES})('{kind}') !== null", timeout=60_000)
    text = page.evaluate(NOTICES, kind)
    context.close()
    return text


@pytest.mark.browser
def test_stepper_renders_the_new_notices(browser, streamlit_server):
    server, _ = streamlit_server
    probs = _notice(browser, server, "cuda-sim", "fp16", "probs", "dtype_argument_converted")
    assert "aten::softmax.int" in probs and "dtype=float32" in probs and "fp16 → fp32" in probs  # dtype badges
    assert "{" not in probs and "inserted these" not in probs
    context = _notice(browser, server, "cpu", "bf16", "context", "listed_arrived_same")
    assert "aten::matmul" in context and "lower_precision_fp" in context and "{" not in context
    print(f"\nrendered: {probs}\nrendered: {context}")  # what a reader sees, for the run's log


@pytest.mark.browser
def test_stepper_says_sdpa_computed_in_float32(browser, streamlit_server):
    server, _ = streamlit_server
    inside = _notice(browser, server, "cpu", "bf16", "context", "op_converts_inside", attention="sdpa")
    assert "aten::scaled_dot_product_attention" in inside and "float32" in inside and "{" not in inside
    assert "aten.bmm.default" in inside
    print(f"\nrendered: {inside}")
