"""What every real-browser test shares: where Chromium is, how to require it, when a page is idle.

Debian's Chromium (`apt-get install -y chromium`), driven by the playwright package; never a downloaded browser.
Missing, it fails the test in CI and skips it elsewhere (tests/prerequisites.py).
"""

import shutil

from tests.prerequisites import require_debian_tool

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"  # the script run has finished
# Idle: the script run has ended, nothing is stale or a skeleton, and every plotly chart has drawn its SVG.
QUIET = """() => { const c = document.querySelectorAll('[data-testid=stPlotlyChart]').length;
  return !!document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")
    && !document.querySelector('[data-stale=true], [data-testid=stSkeleton]')
    && document.querySelectorAll('.js-plotly-plot .main-svg').length >= c; }"""


ROOM_BANNER = ".st-key-room_banner"  # a presenter's room, shown once the browser has said its presenter key


def settle(page, *, present: bool = False, timeout: float = 300_000) -> None:
    """Wait until what a page load started has ended: the script's run has finished, every chart has drawn and
    nothing is stale (QUIET). A page runs once per load, except in presenter mode: the first run mounts the
    presenter-key component, whose answer starts the run that opens the room; its banner shows that run has come.
    (Only the banner's own fragment reruns after that, every few seconds.)"""
    page.wait_for_selector(APP_IDLE, timeout=timeout)
    if present:
        page.wait_for_selector(ROOM_BANNER, timeout=timeout)
        page.wait_for_selector(APP_IDLE, timeout=timeout)
    page.wait_for_function(QUIET, timeout=timeout)


def wait_until_still(page, measure: str, frames: int = 5, timeout: float = 30_000) -> None:
    """Wait until `measure` (JS: a function of no arguments that returns JSON-able data, such as element boxes)
    gives the same value on `frames` animation frames in a row: a scroll or a re-layout has come to rest. The frames
    are the browser's own event, awaited instead of a guessed time; a smooth scroll changes the value every frame."""
    page.evaluate("() => { window.__mpvizStill = {last: null, same: 0}; }")
    page.wait_for_function(
        f"""() => {{ const now = JSON.stringify(({measure})()), still = window.__mpvizStill;
          still.same = now === still.last ? still.same + 1 : 0; still.last = now;
          return still.same >= {frames - 1}; }}""",
        polling="raf",
        timeout=timeout,
    )


def require_chromium() -> str:
    return require_debian_tool(CHROMIUM, "chromium")


def page_report(page) -> str:
    """What a page showed, for a failure message: its URL, whether a run is going on, and its main area's text."""
    shown = page.evaluate(
        """() => ({url: location.href,
                   state: document.querySelector('[data-testid=stApp]')?.dataset.testScriptState,
                   main: (document.querySelector('[data-testid=stMain]')?.innerText || '').slice(0, 3000)})"""
    )
    return f"URL {shown['url']}, script {shown['state']}; it showed:\n{shown['main']}"
