"""The in-browser attention stepper (mpviz/app/stepper.py + assets/components/stepper/): what Python hands the browser,
and what the browser does with it, without the server.

Python side: the payload is the pre-serialised bytes the docstring promises, cached, and AppTest sees the mount.
Contracts: the bundle Python builds is exactly what mpviz/contracts/bundle.schema.json declares, the payload's meta
what stepper_meta.schema.json declares; the stepper imports the same files.
Build: what the package ships (mpviz/presentation/static, mpviz/app/static) is what the sources build; the modules' own
node tests pass. Text side: every key the JS asks for exists in mpviz/locales/en, every glossary term the text uses is
defined. Browser side (Chromium against `streamlit run app.py`, the attention page): stepping, clicking a graph node, a
heatmap cell, a bit and ±1 ulp show the right op and element and send no rerun to the server; a copied link and a
new run keep the place; the JS float bits agree with mpviz.formats.encode.
"""

import base64
import json
import math
import re
import string
import subprocess
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from mpviz import contracts, notices
from mpviz.app import text
from mpviz.app.stepper import BUILT_JS, stepper_payload, stepper_text
from mpviz.app.url import BROWSER_KEYS
from mpviz.bundle import _format, lesson_bundle
from mpviz.emulation import EMULATION_LIMITS
from mpviz.formats import FORMAT_NAMES, decode, encode, resolve_format
from mpviz.model import AttentionConfig
from mpviz.policy import CATEGORIES, UNCLASSIFIED
from mpviz.presentation.palette import DTYPE_COLORS
from tests.apptest import failures, page_app
from tests.browser import APP_IDLE, wait_until_still
from tests.prerequisites import require_node_tooling

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets" / "components" / "stepper"  # the stepper's sources; the package ships their build
JS = {p.name: p.read_text() for p in sorted(ASSETS.glob("*.js"))}  # the stepper's modules (sources)


@pytest.fixture(scope="module")
def bundle_bf16() -> dict:
    """The test app's default run, built here to compare what the browser shows against."""
    return lesson_bundle(AttentionConfig(), "cpu", "bf16").data


# ── Python → JS ─────────────────────────────────────────────────────────────────────────────────────────────
def test_payload_is_the_bundle_bytes_wrapped_once(monkeypatch):
    bundle = lesson_bundle(AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cpu", "bf16").to_json().encode()
    text, colors = stepper_text(), dict(DTYPE_COLORS)
    payload = stepper_payload(bundle, text, colors, key="k")
    assert payload.startswith(b'{"bundle":' + bundle + b',"text":')  # the bundle's own bytes, not re-serialised
    got = json.loads(payload)
    assert got["bundle"] == json.loads(bundle)
    assert got["text"] == text and got["style"] == {"dtype_colors": colors}
    assert got["meta"] == {"key": "k", "locale": "en"}
    calls = []
    monkeypatch.setattr(json, "dumps", lambda *a, **k: calls.append(a) or "")
    again = stepper_payload(bundle, text, colors, key="k")  # a second session: no serialising at all
    assert again is payload and calls == []
    assert stepper_payload(bundle.decode(), text, colors, key="k") == payload  # str in, same bytes out


def test_apptest_sees_the_mount_with_the_bundle_inside(bundle_bf16):
    at = page_app("mpviz/pages/attention.py").run()
    assert not failures(at)
    mounts = [e for e in at.get("bidi_component")]
    assert len(mounts) == 1
    proto = mounts[0].proto
    assert proto.WhichOneof("data") == "bytes"
    payload = json.loads(proto.bytes)
    assert payload["bundle"] == bundle_bf16
    assert payload["meta"]["key"] == "stepper" and payload["text"]["ui"]["controls"]["next"]
    assert proto.js_content == BUILT_JS.read_text() and "mount as default" in proto.js_content
    assert proto.css_content


# ── the contracts (mpviz/contracts/): one JSON file each, read here and bundled into the stepper ──────────────
def bundle_schema() -> dict:
    """The lesson bundle's JSON Schema (mpviz/contracts/bundle.schema.json): an object allows exactly its
    properties (the required ones listed), a map any keys; the root is Bundle."""
    return contracts.BUNDLE_SCHEMA


def test_the_contracts_are_json_the_built_stepper_carries():
    """Each contract is one file: Python reads it through mpviz.contracts, the stepper imports it (esbuild inlines
    it), and neither side keeps a list of its own."""
    built = BUILT_JS.read_text()
    for name in ("personal_keys.json", "stepper_keys.json", "stepper_meta.schema.json", "bundle.schema.json"):
        assert contracts.load(name)
    keys = contracts.load("stepper_keys.json")
    assert (*keys["place"], *keys["legacy_element"]) == BROWSER_KEYS
    assert json.dumps(keys["place"]) in built and json.dumps(contracts.load("personal_keys.json")) in built
    assert 'from "../../../mpviz/contracts/stepper_keys.json"' in JS["place.js"]
    assert 'from "../../../mpviz/contracts/stepper_meta.schema.json"' in JS["meta.js"]
    for name, source in JS.items():  # the lists live in the contracts only
        assert not re.search(r'\[\s*"(step|present)"|\[\s*"story",\s*"full"|\[\s*"all",\s*"forward"', source), name
    jsonschema.Draft202012Validator.check_schema(contracts.BUNDLE_SCHEMA)
    jsonschema.Draft202012Validator.check_schema(contracts.META_SCHEMA)


@pytest.mark.parametrize(
    "options",
    [{}, {"presenter": True}, {"embedded": True}, {"embedded": True, "stream": (600, 256)}],
)
def test_every_meta_python_sends_keeps_to_its_schema(options):
    bundle = b'{"events": []}'
    payload = json.loads(stepper_payload(bundle, stepper_text(), dict(DTYPE_COLORS), key="k", locale="zh", **options))
    jsonschema.validate(payload["meta"], contracts.META_SCHEMA)
    assert set(payload) == {"bundle", "text", "style", "meta"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**payload["meta"], "surprise": 1}, contracts.META_SCHEMA)


@pytest.mark.parametrize(
    "cfg, device, dtype",
    [
        (AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cpu", "bf16"),
        (AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cpu", "off"),
        (AttentionConfig(seq_len=8, d_model=16, n_heads=2, input_scale=1e4), "cuda-sim", "fp16"),  # inf/NaN, emulated
    ],
)
def test_python_bundles_match_the_documented_schema(cfg, device, dtype):
    """Every field a bundle carries is declared in the schema, with its type; every required one is there."""
    data = json.loads(lesson_bundle(cfg, device, dtype).to_json())
    jsonschema.validate(data, bundle_schema())
    assert data["first_nonfinite"] is None or "counterpart_event" in data["first_nonfinite"]


def test_the_schema_rejects_what_the_js_would_misread():
    """The check is strict both ways: an undeclared field and a missing required one both fail."""
    data = json.loads(lesson_bundle(AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cpu", "bf16").to_json())
    schema = bundle_schema()
    extra = json.loads(json.dumps(data))
    extra["events"][0]["surprise"] = 1
    missing = json.loads(json.dumps(data))
    del missing["graph"]["nodes"][0]["dtype"]
    for bad in (extra, missing):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


# ── text ────────────────────────────────────────────────────────────────────────────────────────────────────
def _lookup(table: dict, path: str):
    for part in path.split("."):
        table = table.get(part) if isinstance(table, dict) else None
    return table


NOTICE_KINDS = re.findall(r"^    (\w+) +\{", notices.__doc__, re.M)  # the kinds mpviz.notices documents


def test_every_text_key_the_js_uses_exists():
    ui = stepper_text()["ui"]
    code = "\n".join(JS.values())  # the keys the Stepper and its mixins ask for
    literal = set(re.findall(r'\.(?:t|ts|has)\("([\w.]+)"', code))
    assert len(literal) > 80
    dynamic = {  # keys the JS builds from data: every value the bundle can carry
        "notice": NOTICE_KINDS,
        "views": ("story", "full"),
        "phases": ("all", "forward", "backward"),
        "devices": ("cpu", "cuda", "cuda-sim"),
        "policies": ("cpu", "cuda"),
        "values.overflow_to": ("inf", "nan", "saturate"),
        "values.zone": ("flush", "subnormal", "normal", "over_inf", "over_nan", "over_saturate"),
        "values": ("min", "max", "abs_max", "mean", "std", "nan", "posinf", "neginf", "zero"),
        "graph.band": ("forward_right", "forward_down", "backward_left", "backward_up", "backward_down"),
        "heat": ("nan", "posinf", "neginf"),
        "limits": EMULATION_LIMITS,
    }
    keys = literal | {f"{group}.{k}" for group, names in dynamic.items() for k in names}
    assert len(NOTICE_KINDS) >= 9
    missing = sorted(k for k in keys if not isinstance(_lookup(ui, k), str))
    assert missing == []


def _strings(table: dict, prefix=""):
    for k, v in table.items():
        if isinstance(v, dict):
            yield from _strings(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def test_templates_parse_and_every_glossary_term_they_use_is_defined():
    text = stepper_text()
    glossary = text["glossary"]
    for where, table in text.items():
        for path, value in _strings(table):
            assert isinstance(value, str), (where, path)
            fields = [f for _, f, _, _ in string.Formatter().parse(value) if f is not None]  # Python-style braces
            for f in fields:
                assert re.fullmatch(r"\w+", f), (where, path, f)
                if f.startswith("gl_"):
                    assert f[3:] in glossary, (path, f)
            assert value.count("`") % 2 == 0 and value.count("**") % 2 == 0, (where, path)
    for term in (*CATEGORIES, UNCLASSIFIED, "ulp", "binade", "subnormal", "saturation", "loss_scale", "landmark"):
        assert glossary[term]["term"] and glossary[term]["text"], term


# A host adapter (the notebook's, as the offline lesson file's inline script) does two things the stepper never does:
# it imports the built stepper from a Blob URL of its text, and it parses the stepper's own markup file (no data).
HOST_ONLY = {
    "notebook.js": {
        "import(": "const module = import(url)",
        "innerHTML": 'markup.innerHTML = model.get("_stepper_html")',
    }
}


def test_the_component_builds_no_html_from_strings_and_reaches_no_network():
    for name, source in {**JS, "stepper.js (built)": BUILT_JS.read_text()}.items():
        # comments out: a JSDoc type may say import("./x.js"), which is no dynamic import
        code = re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)
        for banned, only_use in HOST_ONLY.get(name, {}).items():
            assert code.count(banned) == code.count(only_use) == 1, (name, banned)
            code = code.replace(only_use, "")
        for banned in (
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "fetch(",
            "XMLHttpRequest",
            "WebSocket",
            "import(",
            'setAttribute("on',
        ):
            assert banned not in code, (name, banned)
    assert "http" not in (ASSETS / "stepper.css").read_text().replace("http://www.w3.org/2000/svg", "")


# ── the browser ─────────────────────────────────────────────────────────────────────────────────────────────
# What the component shows, read from its DOM (Playwright's CSS engine pierces the shadow root).
STATE = """() => {
    const host = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]');
    const r = host && host.shadowRoot;
    const app = r && r.querySelector('[data-role=app]');
    if (!app || app.dataset.event === undefined) return null;
    const v = r.querySelector('.mpv-value');
    return {event: +app.dataset.event, step: +app.dataset.step, title: r.querySelector('.mpv-op-title').textContent,
            value: v ? v.dataset.value : null, el: [...r.querySelectorAll('[data-act^=el-]')].map(i => +i.value),
            current: [...r.querySelectorAll('.mpv-node.mpv-current')].map(n => n.dataset.node),
            landmarks: [...r.querySelectorAll('.mpv-op-title .mpv-lm')].map(n => n.textContent),
            bits: [...r.querySelectorAll('.mpv-bit')].map(b => b.textContent).join('')};
}"""


FOCUSED = "document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]').shadowRoot.activeElement"


class RerunCounter:
    """Counts the `rerun_script` BackMsgs the page sends to the server over its websocket."""

    def __init__(self, page):
        self.reruns = 0
        page.on("websocket", lambda ws: ws.on("framesent", self._frame))

    def _frame(self, payload):
        if isinstance(payload, str):
            return
        msg = BackMsg()
        msg.ParseFromString(payload)
        if msg.WhichOneof("type") == "rerun_script":
            self.reruns += 1


def _open(context, url):
    page = context.new_page()
    counter = RerunCounter(page)
    page.goto(url)
    page.wait_for_selector(APP_IDLE, timeout=120_000)
    page.wait_for_function(f"({STATE})() !== null", timeout=60_000)
    return page, counter


def _state(page):
    return page.evaluate(STATE)


def _sample(bundle, event):
    smp = next(o["sample"] for o in bundle["events"][event]["out"] if "sample" in o)
    return np.frombuffer(base64.b64decode(smp["values"]), "<f4").reshape(smp["shape"])


def _js_float(text: str) -> float:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(text) or float(text)


@pytest.mark.browser
def test_stepping_and_picking_stay_in_the_browser(browser, streamlit_server, bundle_bf16):
    b = bundle_bf16
    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page, counter = _open(context, server)
    reruns_at_load = counter.reruns
    assert reruns_at_load == 1  # the page's first run
    assert _state(page)["event"] == b["story"][0]["event"]
    page.keyboard.press("Tab")  # the page's first Tab stop: the skip link, which takes the keyboard to the stepper
    assert page.evaluate("() => document.activeElement.dataset.mpvSkip") == ""
    page.keyboard.press("Enter")
    assert page.evaluate(f"() => {FOCUSED}.dataset.role") == "app"

    for _ in range(20):  # → 20 times: the 21st story step
        page.keyboard.press("ArrowRight")
    st = _state(page)
    ev = b["events"][b["story"][20]["event"]]
    assert (st["step"], st["event"]) == (20, ev["i"]) and f"#{ev['i']}" in st["title"] and ev["op"] in st["title"]
    page.wait_for_function("() => location.search.includes('step=20')")

    page.locator("[data-node='scores']").click()  # a graph node: its step
    st = _state(page)
    assert st["event"] == b["landmarks"]["scores"] and st["current"] == ["scores"]

    canvas = page.locator(".mpv-heat-canvas")  # a heatmap cell: probs, that element
    box = canvas.bounding_box()
    probs = _sample(b, b["landmarks"]["probs"])
    rows, cols = probs.shape[1:]
    r, c = 9, 4
    canvas.click(position={"x": (c + 0.5) * box["width"] / cols, "y": (r + 0.5) * box["height"] / rows})
    st = _state(page)
    assert st["event"] == b["landmarks"]["probs"] and st["el"] == [0, r, c]
    value = float(probs[0, r, c])
    assert _js_float(st["value"]) == value
    enc = encode(value, "bfloat16")
    assert st["bits"] == enc.bits

    page.locator("[data-act=ulp-up]").click()  # +1 ulp in bfloat16: a local exploration of the value
    st = _state(page)
    assert _js_float(st["value"]) == enc.next_up and st["bits"] == encode(enc.next_up, "bfloat16").bits
    assert st["el"] == [0, r, c]  # still the same element
    page.locator("[data-act=ulp-reset]").click()
    page.locator(".mpv-bit[data-bit='14']").click()  # flip the top exponent bit
    flipped = enc.bits[0] + ("1" if enc.bits[1] == "0" else "0") + enc.bits[2:]
    assert _state(page)["bits"] == flipped
    assert _js_float(_state(page)["value"]) == decode(flipped, "bfloat16").value
    assert page.evaluate(f"() => {FOCUSED}.dataset.bit") == "14"  # the keyboard stays on the flipped bit

    page.wait_for_function("() => location.search.includes('el=0.9.4')")
    assert counter.reruns == reruns_at_load, "stepping and picking sent rerun requests to the server"

    # the copied link, in a fresh browser: the same step and element
    url = page.url
    assert "view=full" not in url or "step=" in url
    fresh = browser.new_context(viewport={"width": 1024, "height": 768})
    other, _ = _open(fresh, url)
    st2 = _state(other)
    assert st2["event"] == b["landmarks"]["probs"] and st2["el"] == [0, r, c]
    assert _js_float(st2["value"]) == value
    fresh.close()
    context.close()


@pytest.mark.browser
def test_views_keys_and_a_new_run_keep_the_same_tensor(browser, streamlit_server, bundle_bf16):
    b = bundle_bf16
    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    # an old shared link: step index and the legacy element keys
    page, counter = _open(context, f"{server}/?step=5&em=1&er=2&ec=3")
    st = _state(page)
    assert st["event"] == b["landmarks"]["scores"] == b["story"][5]["event"] and st["el"] == [1, 2, 3]
    page.wait_for_function("() => location.search.includes('el=1.2.3') && !location.search.includes('em=')")

    page.locator("[data-view=full]").click()  # the Every-op view keeps the op
    assert _state(page)["event"] == b["landmarks"]["scores"]
    page.locator("[data-act=el-1]").fill("5")  # typing in a field: arrows edit it, they do not step
    page.locator("[data-act=el-1]").press("ArrowRight")
    assert _state(page)["event"] == b["landmarks"]["scores"]
    page.keyboard.press("Tab")  # leaving the field commits it
    assert _state(page)["el"] == [1, 5, 3]
    page.locator("[data-node='grad_head.weight']").click()
    st = _state(page)
    key = b["events"][st["event"]]["key"]
    assert key == "grad_head.weight"
    page.wait_for_function("() => location.search.includes('view=full')")
    assert counter.reruns == 1

    # a new run (the sidebar's device changes): the same tensor stays in view, our URL keys survive the rerun
    cpu_event = _state(page)["event"]
    device_labels = text.load("en", "common")["device_labels"]
    page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    page.get_by_role("option", name=device_labels["cuda-sim"]).click()
    page.wait_for_function("() => location.search.includes('device=cuda-sim')")
    page.wait_for_selector(APP_IDLE, timeout=120_000)
    page.wait_for_function(f"({STATE})().event !== {cpu_event}", timeout=60_000)  # CUDA's backward: another order
    st = _state(page)
    assert st["landmarks"] == ["grad_head.weight"] and st["current"] == ["grad_head.weight"]
    assert "view=full" in page.url and "device=cuda-sim" in page.url  # Python rewrote the query: ours survived
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('step') === '{st['event']}'")

    # leaving and coming back in the same tab (no query string): the place is kept in sessionStorage
    page.goto(f"{server}/?device=cuda-sim")
    page.wait_for_selector(APP_IDLE, timeout=120_000)
    page.wait_for_function(f"({STATE})() && ({STATE})().event === {st['event']}")
    context.close()


# Geometry of the drawn graph, checked in the browser: boxes that must not overlap, labels inside their nodes,
# everything inside the drawing, and edges that pass through no node other than their own two ends.
GRAPH_PROBLEMS = """() => {
    const r = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]').shadowRoot;
    const svg = r.querySelector('.mpv-svg');
    const vb = svg.viewBox.baseVal;
    const box = (el) => { const b = el.getBBox(); return {x: b.x, y: b.y, w: b.width, h: b.height}; };
    const items = [];
    for (const g of r.querySelectorAll('.mpv-node')) {
        const body = box(g.querySelector('.mpv-node-body'));
        items.push({kind: 'node', id: g.dataset.node, event: g.dataset.event, ...body});
    }
    for (const g of r.querySelectorAll('.mpv-cast-tag')) {
        const tag = box(g.querySelector('rect'));
        items.push({kind: 'tag', id: 'tag' + g.dataset.castsFor, event: g.dataset.castsFor, ...tag});
    }
    for (const t of r.querySelectorAll('.mpv-band-label')) items.push({kind: 'band', id: t.textContent, ...box(t)});
    const overlap = (a, b, pad = 0) => a.x < b.x + b.w - pad && b.x < a.x + a.w - pad
        && a.y < b.y + b.h - pad && b.y < a.y + a.h - pad;
    const problems = [];
    for (let i = 0; i < items.length; i++) {
        const a = items[i];
        const inside = a.x >= vb.x - 0.5 && a.y >= vb.y - 0.5 && a.x + a.w <= vb.x + vb.width + 0.5
            && a.y + a.h <= vb.y + vb.height + 0.5;
        if (!inside) problems.push(`${a.kind} ${a.id} outside the drawing`);
        for (let j = i + 1; j < items.length; j++) {
            const b = items[j];
            const own = (a.kind === 'tag') !== (b.kind === 'tag') && a.event === b.event;  // a badge on its own node
            if (!own && overlap(a, b, 0.5)) problems.push(`${a.kind} ${a.id} overlaps ${b.kind} ${b.id}`);
        }
    }
    for (const g of r.querySelectorAll('.mpv-node')) {
        const body = box(g.querySelector('.mpv-node-body'));
        for (const text of g.querySelectorAll('.mpv-node-name, .mpv-node-dtype, .mpv-chip-name')) {
            const b = box(text);
            const fits = b.x >= body.x - 0.5 && b.x + b.w <= body.x + body.w + 0.5;
            if (!fits) problems.push(`${g.dataset.node}: label too wide`);
        }
    }
    const nodes = items.filter((i) => i.kind === 'node');
    for (const p of r.querySelectorAll('.mpv-edge[data-from]')) {
        const len = p.getTotalLength();
        for (let d = 6; d < len - 6; d += 4) {
            const pt = p.getPointAtLength(d);
            for (const n of nodes) {
                if (n.id === p.dataset.from || n.id === p.dataset.to) continue;
                if (pt.x > n.x + 1 && pt.x < n.x + n.w - 1 && pt.y > n.y + 1 && pt.y < n.y + n.h - 1) {
                    problems.push(`edge ${p.dataset.from}→${p.dataset.to} crosses ${n.id}`);
                    d = len;
                    break;
                }
            }
        }
    }
    return {mode: svg.dataset.mode, problems: [...new Set(problems)]};
}"""


GRAPH_ARRANGED = """() => { const svg = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]')
    .shadowRoot.querySelector('.mpv-svg'); return [svg.dataset.mode, svg.getAttribute('viewBox'), svg.clientWidth]; }"""
BAD_MARKS = """() => document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]')
    .shadowRoot.querySelectorAll('.mpv-bad').length"""


@pytest.mark.browser
def test_graph_labels_never_collide_from_projector_to_phone(browser, streamlit_server):
    """Four runs with different graphs (CUDA's policy, inf/NaN, fused attention without scores/probs), each at
    a 1920 px screen, a 1440 px laptop, a 1024×768 projector and a 390 px phone."""
    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    modes = set()
    for query in ("", "device=cuda-sim", "softmax=naive&scale=4&dtype=fp16", "attn=sdpa"):
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.goto(f"{server}/?{query}")
        page.wait_for_selector(APP_IDLE, timeout=120_000)
        page.wait_for_function(f"({STATE})() !== null", timeout=60_000)
        # inf/NaN marks only where an overflow made them: the causal mask's -inf in scores is not one
        assert (page.evaluate(BAD_MARKS) > 0) == ("naive" in query), query
        for width, height in ((1920, 1080), (1440, 900), (1024, 768), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            wait_until_still(page, GRAPH_ARRANGED)  # the resize observer has laid the graph out again
            got = page.evaluate(GRAPH_PROBLEMS)
            assert got["problems"] == [], (query, width, got)
            modes.add(got["mode"])
    assert {"h", "s"} <= modes  # wide screens lay it out left to right, a phone top to bottom
    context.close()


@pytest.mark.browser
def test_js_float_bits_match_mpviz_formats_encode(browser):
    """floatbits.js, run in Chromium, against the exact Python encoder: every format, awkward values included."""
    rng = np.random.default_rng(0)
    formats, cases = {}, []
    for name in FORMAT_NAMES:
        spec = resolve_format(name)
        formats[name] = _format(spec)
        ulp_max = math.ldexp(1, spec.emax - spec.mantissa_bits)
        values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            -1 / 3,
            spec.max,
            -spec.max,
            spec.max + ulp_max / 2,
            spec.max * 1.01,
            spec.smallest_normal,
            spec.smallest_subnormal,
            spec.smallest_subnormal / 2,
            spec.smallest_subnormal * 0.75,
            spec.smallest_normal * (1 - 2**-12),
            math.inf,
            -math.inf,
            math.nan,
            5e-324,
            1e300,
            65520.0,
            464.0,
            480.0,
        ]
        values += list(rng.choice([-1, 1], 30) * np.ldexp(rng.uniform(0.5, 1, 30), rng.integers(-30, 20, 30)))
        for v in values:
            d = encode(float(v), name).to_dict()
            cases.append(
                [
                    name,
                    repr(float(v)),
                    d["bits"],
                    repr(d["value"]),
                    d["class"],
                    repr(d["next_up"]),
                    repr(d["next_down"]),
                    repr(d["ulp"]),
                    d["exponent"]["unbiased"],
                ]
            )
    page = browser.new_page()
    page.set_content("<!doctype html><title>floatbits</title>")
    page.add_script_tag(  # the module as is, its two entry points handed to the page
        content=JS["floatbits.js"] + "\nObject.assign(window, {fbDescribe, fbSpec});", type="module"
    )
    page.wait_for_function("typeof window.fbDescribe === 'function'")
    bad = page.evaluate(
        """([formats, cases]) => {
            const num = (s) => s === 'None' ? null : s === 'nan' ? NaN : s === 'inf' ? Infinity
              : s === '-inf' ? -Infinity : Number(s);
            const same = (a, b) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
            return cases.filter(([fmt, x, bits, value, cls, up, down, ulp, unb]) => {
              const d = fbDescribe(num(x), fbSpec(formats[fmt]));
              return !(d.bits === bits && d.cls === cls && same(d.value, num(value)) && same(d.nextUp, num(up))
                && same(d.nextDown, num(down)) && same(d.ulp, num(ulp)) && d.exponentUnbiased === unb);
            });
        }""",
        [formats, cases],
    )
    assert len(cases) > 500
    assert bad == []
    page.close()


# ── the node tests (assets/components/stepper/test) ─────────────────────────────────────────────────────────
NODE_FIXTURE = ASSETS / "test" / "fixtures" / "payload.json"
NODE_FIXTURE_CFG = AttentionConfig(seq_len=8, d_model=16, n_heads=2)


def test_the_committed_build_matches_the_sources():
    """What the package ships of assets/components (the bundle esbuild makes of the stepper's modules, and the files
    copied beside it) is what the sources build now: a source edit without `npm run build` fails."""
    node = require_node_tooling()
    built = subprocess.run(
        [node, str(ASSETS / "build.mjs"), "--stdout"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert built.returncode == 0, built.stderr
    for path, source in json.loads(built.stdout).items():
        assert source == (ROOT / path).read_text(encoding="utf-8"), (
            f"{path} is stale: run `npm run build` and commit it"
        )


def test_node_unit_tests_pass():
    """The modules' own tests (assets/components/stepper/test): pure modules under node, the panels in jsdom."""
    node = require_node_tooling()
    files = sorted(str(p) for p in (ASSETS / "test").glob("*.test.js"))
    assert len(files) >= 5
    # the timeout guards against a hang only: on a loaded 2-core host the suite took from 140 s to past 300 s
    run = subprocess.run([node, "--test", *files], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


@pytest.mark.parametrize("check", ["lint", "format:check"])
def test_eslint_and_prettier_pass(check):
    """The stepper's JS is lint-clean (eslint) and formatted (prettier), as ruff keeps the Python."""
    require_node_tooling()
    run = subprocess.run(["npm", "run", "--silent", check], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_the_node_fixture_is_a_bundle_payload_of_the_schema():
    """The node tests' fixture is a real payload: a bundle of the current schema, every text table there."""
    payload = json.loads(NODE_FIXTURE.read_bytes())
    jsonschema.validate(payload["bundle"], bundle_schema())
    assert set(payload) == {"bundle", "text", "style", "meta"} and set(payload["text"]) == {"ui", "glossary"}


def write_node_fixture() -> None:
    """The payload the node tests mount: a small CPU bf16 run, this app's words and colours."""
    bundle = lesson_bundle(NODE_FIXTURE_CFG, "cpu", "bf16").to_json()
    NODE_FIXTURE.write_bytes(stepper_payload(bundle, stepper_text(), DTYPE_COLORS, key="node"))


if __name__ == "__main__":  # python -m tests.test_stepper: rewrite the node tests' fixture
    write_node_fixture()
