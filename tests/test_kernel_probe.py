"""The low-precision kernel probe (mpviz.kernel_probe): a crash in its child caps oneDNN, the user's cap wins,
the outcome is stored per machine and torch build, and the attention page says what was done.

The crash is simulated: MPVIZ_KERNEL_PROBE_FAULT makes the probe's child raise a signal against itself at its
first kernel unless ONEDNN_MAX_CPU_ISA is set, as the AMX fault this exists for does.
"""

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mpviz import kernel_probe as kp
from mpviz.app import text
from tests.apptest import failures, page_app

PROBE_ENV = (kp.ISA_ENV, kp.CAPPED_BY_MPVIZ, kp.FAULT_ENV, "MPVIZ_CACHE_DIR")


@contextmanager
def probe_environment(cache: Path) -> Iterator[None]:
    """The probe cache at `cache`, no ISA setting and no fault; the probe sets os.environ itself (the cap and its
    marker, as a worker inherits them), so the variables are put back as they were by hand afterwards."""
    before = {name: os.environ.get(name) for name in PROBE_ENV}
    for name in PROBE_ENV:
        os.environ.pop(name, None)
    os.environ["MPVIZ_CACHE_DIR"] = str(cache)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture
def probe_env(tmp_path):
    """An empty probe cache, no ISA setting, no fault; whatever the test or the probe sets there is undone after."""
    with probe_environment(tmp_path):
        yield


@pytest.fixture(scope="module")
def crashed(tmp_path_factory) -> tuple[Path, kp.KernelProbe]:
    """(probe cache, outcome) of one real probe whose uncapped child dies by SIGILL: its two children (the crash,
    then the capped run) are paid once for the tests that read what it stored."""
    cache = tmp_path_factory.mktemp("kernel-probe")
    with probe_environment(cache):
        os.environ[kp.FAULT_ENV] = "SIGILL"
        return cache, kp._decide()


def _no_child(isa):
    raise AssertionError("probed again: the stored outcome was not used")


def test_a_crashing_kernel_caps_onednn_and_is_probed_once(crashed, monkeypatch):
    cache, probe = crashed
    assert probe.crashed_signal == signal.SIGILL and probe.signal_name == "SIGILL"
    assert probe.crashed_kernel == "matmul bfloat16"
    assert probe.isa_cap_applied == kp.ISA_CAP
    assert probe.ok, "the re-probe under the cap confirmed the kernels run"
    assert probe.user_isa is None

    with probe_environment(cache):  # the next process, on the same machine, reads the stored outcome
        os.environ[kp.FAULT_ENV] = "SIGILL"
        monkeypatch.setattr(kp, "_probe_child", _no_child)
        assert kp._decide() == probe
        assert os.environ[kp.ISA_ENV] == os.environ[kp.CAPPED_BY_MPVIZ] == kp.ISA_CAP


def test_a_process_that_inherits_the_cap_reports_it_as_mpvizs(crashed, monkeypatch):
    cache, probe = crashed
    with probe_environment(cache):
        os.environ[kp.ISA_ENV] = os.environ[kp.CAPPED_BY_MPVIZ] = kp.ISA_CAP  # as a worker process inherits them
        monkeypatch.setattr(kp, "_probe_child", _no_child)
        again = kp._decide()
    assert again == probe and again.user_isa is None and again.isa_cap_applied == kp.ISA_CAP


def test_the_users_isa_setting_wins(probe_env):
    os.environ[kp.FAULT_ENV] = "SIGILL"
    os.environ[kp.ISA_ENV] = "AVX2"
    probe = kp._decide()
    assert probe.user_isa == "AVX2" and probe.isa_cap_applied is None
    assert os.environ[kp.ISA_ENV] == "AVX2"
    assert probe.ok and probe.crashed_signal is None  # the simulated fault, like the real one, needs no cap


def test_kernels_that_run_change_nothing(probe_env):
    probe = kp._decide()
    assert probe == kp.KernelProbe(ok=True)
    assert kp.ISA_ENV not in os.environ


def test_the_attention_page_says_oneDNN_was_capped(monkeypatch):
    import mpviz.app.serving.results

    capped = kp.KernelProbe(True, int(signal.SIGILL), "matmul bfloat16", kp.ISA_CAP)
    monkeypatch.setattr(mpviz.app.serving.results, "ensure_safe_kernels", lambda: capped)
    at = page_app("mpviz/pages/attention.py").run()
    assert not failures(at)
    shown = " ".join(i.value for i in at.info)
    words = text.load("en", "common")["kernels_capped"].split("{")[0]
    assert words in shown and "SIGILL" in shown and kp.ISA_CAP in shown
