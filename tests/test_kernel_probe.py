"""The low-precision kernel probe (mpviz.kernel_probe): a crash in its child caps oneDNN, the user's cap wins,
the outcome is stored per machine and torch build, and the attention page says what was done.

The crash is simulated: MPVIZ_KERNEL_PROBE_FAULT makes the probe's child raise a signal against itself at its
first kernel unless ONEDNN_MAX_CPU_ISA is set, as the AMX fault this exists for does.
"""

import signal

import pytest

from mpviz import kernel_probe as kp
from mpviz.app import text
from tests.apptest import failures, page_app


@pytest.fixture
def probe_env(monkeypatch, tmp_path):
    """An empty probe cache and no ISA setting; whatever the probe sets in os.environ is undone afterwards."""
    monkeypatch.setenv("MPVIZ_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(kp.ISA_ENV, raising=False)
    monkeypatch.delenv(kp.CAPPED_BY_MPVIZ, raising=False)
    monkeypatch.delenv(kp.FAULT_ENV, raising=False)
    return monkeypatch


def _no_child(isa):
    raise AssertionError("probed again: the stored outcome was not used")


def test_a_crashing_kernel_caps_onednn_and_is_probed_once(probe_env):
    import os

    probe_env.setenv(kp.FAULT_ENV, "SIGILL")
    probe = kp._decide()
    assert probe.crashed_signal == signal.SIGILL and probe.signal_name == "SIGILL"
    assert probe.crashed_kernel == "matmul bfloat16"
    assert probe.isa_cap_applied == kp.ISA_CAP and os.environ[kp.ISA_ENV] == kp.ISA_CAP
    assert probe.ok, "the re-probe under the cap confirmed the kernels run"
    assert probe.user_isa is None

    probe_env.setattr(kp, "_probe_child", _no_child)  # the next process reads the stored outcome
    probe_env.delenv(kp.ISA_ENV)
    assert kp._decide() == probe
    assert os.environ[kp.ISA_ENV] == kp.ISA_CAP


def test_a_process_that_inherits_the_cap_reports_it_as_mpvizs(probe_env):
    probe_env.setenv(kp.FAULT_ENV, "SIGSEGV")
    first = kp._decide()  # sets the cap and its marker, as a worker process inherits them
    probe_env.setattr(kp, "_probe_child", _no_child)
    again = kp._decide()
    assert again == first and again.user_isa is None and again.isa_cap_applied == kp.ISA_CAP


def test_the_users_isa_setting_wins(probe_env):
    import os

    probe_env.setenv(kp.FAULT_ENV, "SIGILL")
    probe_env.setenv(kp.ISA_ENV, "AVX2")
    probe = kp._decide()
    assert probe.user_isa == "AVX2" and probe.isa_cap_applied is None
    assert os.environ[kp.ISA_ENV] == "AVX2"
    assert probe.ok and probe.crashed_signal is None  # the simulated fault, like the real one, needs no cap


def test_kernels_that_run_change_nothing(probe_env):
    import os

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
