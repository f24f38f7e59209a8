"""`mpviz.show` in JupyterLab, in Chromium: the example notebook run as a reader runs it, the stepper stepped by keys.

A real JupyterLab (headless, loopback, a token, a temp dir of its own, news and update checks off) opens
examples/your_model.ipynb; Run All traces the tiny GPT-2 in its kernel and the widget mounts the built stepper in
the output. Then, by keyboard only: → and ← step it (the card shows the op the step names), the module tree moves
and opens with arrows and Enter goes to a module's first op. axe finds nothing critical or serious inside the
stepper. With the kernel shut down the stepper still steps: it never asks the kernel. The step's script time is
measured (printed, not asserted), and a screenshot is saved (MPVIZ_UPDATE_SCREENSHOTS=1 writes it to
assets/images/notebook.png for the README). marimo, another anywidget host, runs a small model's app the same way:
the stepper draws and steps by keys there too.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.prerequisites import require_python_packages
from tests.servers import free_port, stop, wait_until_answering
from tests.test_a11y_browser import AXE_JS, AXE_RUN, BLOCKING

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "your_model.ipynb"
SCREENSHOT = ROOT / "assets" / "images" / "notebook.png"
APP = ".jp-OutputArea-output [data-role=app]"  # the stepper (Playwright's CSS engine pierces its shadow root)
# JupyterLab's own notices would sit over the screenshot: no news, no update checks
SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"}}
KERNEL_IDLE = """() => { const w = window.jupyterapp?.shell.currentWidget;
  return w?.sessionContext?.session?.kernel?.status === 'idle'; }"""
# the stepper's shadow root in the notebook's output
ROOT_JS = (
    "[...document.querySelectorAll('.jp-OutputArea-output *')].map((n) => n.shadowRoot)"
    ".find((r) => r?.querySelector('[data-role=app]'))"
)
# the stepper's place, what its card says, the module tree's marked row and which row has focus
SHOWN = f"""() => {{ const r = {ROOT_JS}; const a = r?.querySelector('[data-role=app]');
  if (!a || a.dataset.step === undefined) return null;
  const on = r.querySelector('.mpv-tree-on');
  return {{step: +a.dataset.step, event: +a.dataset.event, title: r.querySelector('.mpv-op-title').textContent,
          module: on ? on.dataset.path : null, focus: r.activeElement?.dataset.path ?? null}}; }}"""
# the script time of `n` steps by → then ← (keydown to the end of the render), ms each
STEP_TIMES = f"""(n) => {{ const app = {ROOT_JS}.querySelector('[data-role=app]'); const times = [];
  for (let k = 0; k < n; k++) {{ const key = k < n / 2 ? 'ArrowRight' : 'ArrowLeft'; const t0 = performance.now();
    app.dispatchEvent(new KeyboardEvent('keydown', {{key, bubbles: true, composed: true}}));
    times.push(performance.now() - t0); }}
  return times; }}"""

# a cell added below the last and run: the example's model streamed (mpviz.show past a 100-op cap)
STREAMED_CELL = (
    "streamed = mpviz.show(model, ids, kwargs={'labels': ids}, reference=False, max_events=100)\n"
    "assert streamed.chunks is not None\nstreamed"
)
ADD_CELL = """(code) => { const app = window.jupyterapp; const nb = app.shell.currentWidget.content;
  nb.activeCellIndex = nb.widgets.length - 1; app.commands.execute('notebook:insert-cell-below');
  nb.activeCell.model.sharedModel.setSource(code); return app.commands.execute('notebook:run-cell'); }"""
# the streamed stepper's shadow root: the second stepper in the notebook
STREAMED_JS = (
    "[...document.querySelectorAll('.jp-OutputArea-output *')].map((n) => n.shadowRoot)"
    ".filter((r) => r?.querySelector('[data-role=app]'))[1]"
)
# the full list, the slider to op 300 (past the first chunk of 256); whether that step was still on its way
# ("loading") or already fetched ahead ("ready") when drawn
STEP_PAST_FIRST_CHUNK = f"""() => {{ const r = {STREAMED_JS}; r.querySelector('[data-view=full]').click();
  const slider = r.querySelector('[data-act=slider]'); slider.value = '300';
  slider.dispatchEvent(new Event('input')); return r.querySelector('[data-role=app]').dataset.pending ?? 'ready'; }}"""


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """`jupyter lab` on a free loopback port with a random token, serving a temp dir holding the example notebook;
    yields (base URL, token). Its kernels find mpviz through PYTHONPATH, as a reader's `PYTHONPATH=.` does."""
    require_python_packages("jupyterlab", "ipykernel", "anywidget")
    home = tmp_path_factory.mktemp("jupyterlab")
    shutil.copy(NOTEBOOK, home)
    settings = home / ".settings"
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
        "JUPYTER_CONFIG_DIR": str(home / ".config"),
        "JUPYTER_RUNTIME_DIR": str(home / ".runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / ".workspaces"),
        "IPYTHONDIR": str(home / ".ipython"),
    }
    args = [
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={home}",
        "--ServerApp.allow_root=True",  # CI's container runs as root
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: Run All and the kernel's state, without menus
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log_path = home / "jupyterlab.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", *args], cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(proc, f"{url}/api/status?token={token}", log_path, "jupyter lab")
        yield url, token
    finally:
        stop(proc)


def test_the_notebook_runs_in_jupyterlab_and_its_stepper_steps_by_keyboard(browser, jupyterlab, tmp_path, printout):
    url, token = jupyterlab
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{url}/lab/tree/{NOTEBOOK.name}?token={token}")
        page.wait_for_function(KERNEL_IDLE, timeout=90_000)
        start = time.perf_counter()
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(f"() => ({SHOWN})() !== null", timeout=180_000)
        drawn = time.perf_counter() - start
        page.wait_for_function(KERNEL_IDLE, timeout=60_000)
        first = page.evaluate(SHOWN)
        assert first["step"] == 0 and first["module"] is not None, first

        # ← → step it, with focus in the stepper (the notebook keeps its own keys everywhere else)
        page.locator(APP).focus()
        page.keyboard.press("ArrowRight")
        moved = page.evaluate(SHOWN)
        assert moved["step"] == 1 and moved["event"] != first["event"], (first, moved)
        assert f"#{moved['event']}" in moved["title"], moved  # the card names the op the step shows
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        assert page.evaluate(SHOWN)["step"] == 1

        # the module tree: the current op's module is marked; arrows move through the rows, → opens, Enter goes
        tree_stop = page.locator(f"{APP} [role=treeitem][tabindex='0']")
        tree_stop.focus()
        page.keyboard.press("Home")  # the whole model
        assert page.evaluate(SHOWN)["focus"] == ""
        page.keyboard.press("ArrowDown")  # its first child: "transformer"
        assert page.evaluate(SHOWN)["focus"] == "transformer"
        page.keyboard.press("ArrowDown")  # transformer.wte (its first child, open on the path to the first op)
        row = page.evaluate(SHOWN)["focus"]
        assert row.startswith("transformer."), row
        page.keyboard.press("Enter")
        jumped = page.evaluate(SHOWN)
        assert jumped["module"] == row and jumped["focus"] == row, jumped  # there, and focus stays in the tree
        first_op = page.locator(f"{APP} [role=treeitem][data-path='{row}']")
        assert first_op.get_attribute("aria-selected") == "true"

        # the README's picture: the cell that calls mpviz.show, and the stepper it drew at autocast's first cast
        page.locator(f"{APP} [data-view=full]").click()
        page.locator(APP).focus()
        page.keyboard.press("Home")
        for _ in range(60):
            if page.evaluate(f"() => !!{ROOT_JS}.querySelector('.mpv-flow-on .mpv-tree-cast')"):
                break
            page.keyboard.press("ArrowRight")
        page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
        cell = page.locator(".jp-CodeCell", has_text="mpviz.show(model").first
        cell.evaluate("(c) => c.scrollIntoView({block: 'start'})")
        page.mouse.move(0, 0)
        shot = tmp_path / "notebook.png"
        page.screenshot(path=str(shot))
        if os.environ.get("MPVIZ_UPDATE_SCREENSHOTS") == "1":
            shutil.copy(shot, SCREENSHOT)

        # axe inside the stepper (JupyterLab's own page is not ours to judge): nothing critical or serious
        page.evaluate(AXE_JS)
        every = page.evaluate(AXE_RUN, ".mpv-notebook")
        findings = [f for f in every if f["stepper"]]
        assert [f"{f['rule']} {f['target']}: {f['why']}" for f in findings if f["impact"] in BLOCKING] == []
        rules = ", ".join(sorted({f"{f['rule']} ({f['impact']})" for f in findings}))
        axe_said = f"axe: {len(findings)} findings in the stepper [{rules}], {len(every)} in the whole JupyterLab page"

        # a model past the caps, streamed (a cell of its own, a 100-op cap): the first chunk comes with the widget,
        # a step past it is fetched from the kernel through anywidget's messages and then drawn
        start = time.perf_counter()
        page.evaluate(ADD_CELL, STREAMED_CELL)
        page.wait_for_function(f"() => {STREAMED_JS}?.querySelector('[data-role=app]')?.dataset.step", timeout=120_000)
        streamed_drawn = time.perf_counter() - start
        page.wait_for_function(KERNEL_IDLE, timeout=60_000)
        when_drawn = page.evaluate(STEP_PAST_FIRST_CHUNK)
        page.wait_for_function(
            f"() => {{ const a = {STREAMED_JS}.querySelector('[data-role=app]');"
            " return +a.dataset.event >= 256 && a.dataset.pending === undefined; }",
            timeout=30_000,
        )
        assert page.evaluate(f"() => !!{STREAMED_JS}.querySelector('.mpv-stat')"), "the fetched step's values drawn"
        stream_said = (
            f"streamed (100-op cap): Run to a drawn stepper {streamed_drawn:.1f} s, op 300 (second chunk) "
            f"{when_drawn} when stepped to, then drawn from the kernel's chunk"
        )

        # no kernel behind it: stepping never asks one
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel", timeout=30_000
        )
        before = page.evaluate(SHOWN)
        page.locator(APP).first.focus()  # the first model's, not the streamed one's
        page.keyboard.press("End")
        after = page.evaluate(SHOWN)
        assert after["step"] > before["step"], (before, after)

        times = page.evaluate(STEP_TIMES, 60)
        assert not errors, errors
        printout(
            f"JupyterLab: Run All to a drawn stepper {drawn:.1f} s (kernel start, trace, widget); "
            f"step script time median {statistics.median(times):.2f} ms, max {max(times):.2f} ms over {len(times)} "
            f"steps; {axe_said}; {stream_said}; screenshot {shot}"
        )
    finally:
        context.close()


# ── marimo: another anywidget host ─────────────────────────────────────────────────────────────────────────────
MARIMO_APP = """import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    from torch import nn

    import mpviz

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 4)))
    mpviz.show(model, torch.randn(4, 8))
    return
"""


def test_the_same_widget_steps_in_marimo(browser, tmp_path):
    require_python_packages("marimo")
    (tmp_path / "app.py").write_text(MARIMO_APP)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    args = ["run", str(tmp_path / "app.py"), "--headless", "--host", "127.0.0.1", "--port", str(port), "--no-token"]
    log_path = tmp_path / "marimo.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "marimo", *args], cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        wait_until_answering(proc, f"http://127.0.0.1:{port}", log_path, "marimo")
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{port}")
        app = page.locator("[data-role=app][data-step]")
        app.wait_for(timeout=120_000)
        assert app.get_attribute("data-step") == "0"
        first = app.get_attribute("data-event")
        app.focus()
        page.keyboard.press("ArrowRight")
        assert app.get_attribute("data-step") == "1" and app.get_attribute("data-event") != first
        marked = page.locator(".mpv-tree-on").get_attribute("data-path")
        assert marked in ("0", "1", "2", "2.0", "2.1"), marked
        assert not errors, errors
    finally:
        context.close()
        stop(proc)
