"""What every real-browser test shares: where Chromium is, how to require it (and any Debian tool), when a page is idle.

Debian's Chromium (`apt-get install -y chromium`), driven by the playwright package; never a downloaded browser.
In CI (CI=true) a missing Chromium fails the test loudly: .ci/run installs it, so a skip there would hide a pass
that never happened.
"""

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"  # the script run has finished
# Idle: the script run has ended, nothing is stale or a skeleton, and every plotly chart has drawn its SVG.
QUIET = """() => { const c = document.querySelectorAll('[data-testid=stPlotlyChart]').length;
  return !!document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")
    && !document.querySelector('[data-stale=true], [data-testid=stSkeleton]')
    && document.querySelectorAll('.js-plotly-plot .main-svg').length >= c; }"""


def require_debian_tool(path: str | None, package: str) -> str:
    """`path` of a Debian tool a test drives; without it the test fails in CI (.ci/run installs `package`, so a
    skip there would hide a pass that never happened) and is skipped elsewhere."""
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{package} is missing in CI: .ci/run must `apt-get install -y {package}`")
    pytest.skip(f"no {package} on this machine (apt-get install -y {package}); CI runs this test for real")


def require_chromium() -> str:
    return require_debian_tool(CHROMIUM, "chromium")
