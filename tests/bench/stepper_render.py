"""Benchmark of the in-browser stepper, default and largest config: what one mount costs the server per session,
and how long one step takes to render in Chromium.

    python tests/bench/stepper_render.py [--steps 100] [--bundle a.json ...]

Server: `mount_stepper` timed inside a real script run (AppTest's runtime: the same element building, hashing and
queueing a browser session pays), after a warm-up, with `data=bytes` as used and with `data=str` for comparison.

Mounts assets/components/stepper (the same HTML, CSS and built JS that mpviz/app/stepper.py registers) in a bare
page, hands it the exact payload `stepper_payload` builds, then times each step with performance.now(): from the
key press to the end of the render (script: every DOM change made) and to the end of a forced layout (script +
style + layout; paint follows within the same frame). Steps go
back and forth through the Story view and then the Every-ATen-op view. Prints median / p95 / max per view and the
first mount (JSON parse + building every panel). Not a test: benchmarks measure, tests assert.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from mpviz.app.stepper import ASSETS, BUILT_JS, DTYPE_COLORS, stepper_payload, stepper_text  # noqa: E402
from mpviz.bundle import lesson_bundle  # noqa: E402
from mpviz.model import LIMITS, AttentionConfig  # noqa: E402

MOUNT = """async ([html, css, js, payload]) => {
    const host = document.createElement('div');
    host.style.width = '1400px';
    document.body.append(host);
    const root = host.attachShadow({mode: 'open'});
    const style = document.createElement('style');
    style.textContent = css;
    const tpl = document.createElement('template');
    tpl.innerHTML = html;  // the component's own static markup (trusted, from the repo), as Streamlit mounts it
    root.append(style, tpl.content);
    const url = URL.createObjectURL(new Blob([js], {type: 'text/javascript'}));
    const mod = await import(url);
    const data = new TextEncoder().encode(payload);
    const t0 = performance.now();
    mod.default({name: 'bench', key: 'bench', data, parentElement: root, setStateValue() {}, setTriggerValue() {}});
    root.querySelector('.mpv').offsetHeight;
    window.__root = root;
    return performance.now() - t0;
}"""

STEPS = """([n, view]) => {
    const root = window.__root;
    root.querySelector(`[data-view=${view}]`).click();
    root.querySelector('[data-act=prev]').click();
    const times = [];
    let dir = 'ArrowRight';
    for (let k = 0; k < n; k++) {
        const next = root.querySelector('[data-act=next]'), prev = root.querySelector('[data-act=prev]');
        if (dir === 'ArrowRight' && next.disabled) dir = 'ArrowLeft';
        if (dir === 'ArrowLeft' && prev.disabled) dir = 'ArrowRight';
        const t0 = performance.now();
        window.dispatchEvent(new KeyboardEvent('keydown', {key: dir, bubbles: true}));
        const t1 = performance.now();
        root.querySelector('.mpv').offsetHeight;  // style + layout of everything the step changed
        times.push([t1 - t0, performance.now() - t0]);
    }
    return times;
}"""


def _bundles(paths: list[str]) -> list[tuple[str, bytes]]:
    if paths:
        return [(Path(p).stem, Path(p).read_bytes()) for p in paths]
    largest = AttentionConfig(seq_len=LIMITS.max_seq_len, d_model=LIMITS.max_d_model, n_heads=LIMITS.max_heads)
    out = []
    for name, cfg in (("default", AttentionConfig()), ("largest", largest)):
        t0 = time.perf_counter()
        data = lesson_bundle(cfg, "cpu", "bf16").to_json().encode()
        print(
            f"built {name} bundle ({cfg.seq_len}×{cfg.d_model}, {cfg.n_heads} heads): {len(data) / 1e6:.2f} MB "
            f"in {time.perf_counter() - t0:.1f} s"
        )
        out.append((name, data))
    return out


SERVER = """
import time, streamlit as st
from mpviz.app.stepper import _component, mount_stepper, stepper_payload, stepper_text, DTYPE_COLORS
bundle = st.session_state["bundle"]
data = stepper_payload(bundle, stepper_text(), DTYPE_COLORS)
mounts, lookups = {"bytes": [], "str": []}, []
for k in range(N + 1):
    t0 = time.perf_counter()
    mount_stepper(bundle, key=f"stepper{k}")  # a fresh key each time: a new element, as for a new session
    mounts["bytes"].append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    _component(key=f"str{k}", data=data.decode())
    mounts["str"].append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    stepper_payload(bundle, stepper_text(), DTYPE_COLORS)
    lookups.append(time.perf_counter() - t0)
st.session_state["result"] = (mounts, lookups)
"""


def _server(name: str, bundle: bytes, n: int = 20) -> None:
    at = AppTest.from_string(SERVER.replace("N + 1", str(n + 1)), default_timeout=300)
    at.session_state["bundle"] = bundle
    at.run()
    if at.exception:
        sys.exit(f"server benchmark failed: {at.exception}")
    mounts, lookups = at.session_state["result"]
    med = {k: statistics.median(v[1:]) * 1e3 for k, v in mounts.items()}  # the first builds the cache
    print(
        f"{name}: server per mount (payload {len(bundle) / 1e6:.2f} MB): data=bytes {med['bytes']:.2f} ms, "
        f"data=str {med['str']:.2f} ms; of which the payload lookup {statistics.median(lookups[1:]) * 1e6:.0f} µs"
    )


def _summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return f"median {statistics.median(times):6.2f} ms · p95 {p95:6.2f} ms · max {ordered[-1]:6.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--bundle", nargs="*", default=[], help="bundle JSON files instead of building default/largest")
    args = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-headless-shell")
    if not exe:
        sys.exit("needs Chromium (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    html, css = (ASSETS / "stepper.html").read_text(), (ASSETS / "stepper.css").read_text()
    js = BUILT_JS.read_text()
    text = stepper_text()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        for name, bundle in _bundles(args.bundle):
            _server(name, bundle)
            payload = stepper_payload(bundle, text, DTYPE_COLORS, key="bench").decode()
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_content("<!doctype html><meta charset=utf-8><body style='margin:0;font-family:sans-serif'>")
            mount_ms = page.evaluate(MOUNT, [html, css, js, payload])
            print(f"{name}: first mount (parse {len(payload) / 1e6:.2f} MB + build) {mount_ms:.1f} ms")
            for view in ("story", "full"):
                page.evaluate(STEPS, [40, view])  # warm up the JIT and the sample cache
                times = page.evaluate(STEPS, [args.steps, view])
                print(f"  {view:>5} view, {args.steps} steps, script only:     {_summary([t[0] for t in times])}")
                print(f"  {view:>5} view, {args.steps} steps, script + layout: {_summary([t[1] for t in times])}")
            page.close()
        browser.close()
    print(json.dumps({"note": "one step = key press → render → forced style + layout, Chromium headless"}))


if __name__ == "__main__":
    main()
