"""What some tests need from outside the repository, and one rule for when it is missing: fail loudly in CI
(`.ci/run` provides it, so a skip there would hide a pass that never happened), skip with a reason elsewhere (a
user who cloned the repository alone, or has no Chromium, still gets a green run of everything else)."""

import fcntl
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"  # the tutorials the claims cite: CI's clean clone has ../shared beside it


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(found: bool, what: str, remedy: str) -> None:
    """Go on if `found`; otherwise fail in CI and skip elsewhere, saying what is missing and how to get it."""
    if found:
        return
    if in_ci():
        pytest.fail(f"{what} is missing in CI: {remedy}")
    pytest.skip(f"no {what} on this machine ({remedy}); CI runs this test for real")


def require_debian_tool(path: str | None, package: str) -> str:
    """`path` of a Debian tool a test drives (.ci/run installs `package`)."""
    require(bool(path), package, f"apt-get install -y {package}")
    return path


def require_python_packages(*names: str) -> None:
    """Python packages a test drives beyond the app's (requirements-dev.txt pins them: jupyterlab, nbclient ...)."""
    missing = [n for n in names if importlib.util.find_spec(n) is None]
    require(not missing, " and ".join(missing), "pip install -r requirements-dev.txt")


def require_seeds() -> Path:
    """The seed tutorials beside the checkout (../shared/seeds)."""
    require(SEEDS.is_dir(), f"seed tutorials at {SEEDS}", "clone beside ../shared, as CI does")
    return SEEDS


def require_node_tooling() -> str:
    """node, with the stepper's pinned JS tools installed (`npm ci`, once, by whichever test asks first; package.json
    and package-lock.json pin them): so the README's test command runs the JS lint and unit tests too."""
    node, npm = shutil.which("node"), shutil.which("npm")
    require(bool(node and npm), "node and npm", "apt-get install -y nodejs npm; node >= 20.19")
    # Two pytest workers must not run `npm ci` at once: they take turns on the lockfile itself (a lock of its own
    # would be one more file written into the checkout; node_modules/ is git-, docker-, eslint- and prettier-ignored).
    with open(ROOT / "package-lock.json", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (ROOT / "node_modules" / ".package-lock.json").is_file():
            ci = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=ROOT, capture_output=True, text=True)
            require(ci.returncode == 0, "the stepper's JS tools", f"`npm ci` failed: {ci.stderr[-600:]}")
    return node
