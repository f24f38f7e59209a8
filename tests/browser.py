"""What every real-browser test shares: where Chromium is, how to require it, and when a Streamlit page is idle.

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


def require_chromium() -> str:
    if CHROMIUM:
        return CHROMIUM
    if os.environ.get("CI"):
        pytest.fail("Chromium is missing in CI: .ci/run must `apt-get install -y chromium`")
    pytest.skip("no chromium on this machine (apt-get install -y chromium); CI runs this test for real")
