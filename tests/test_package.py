"""mpviz as a package: what the wheel holds, `mpviz app`'s settings, an install outside the checkout, and no side
effects (importing starts no process; showing a widget changes no global)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import plotly.io as pio
import pytest
import torch
from streamlit.config_option import ConfigOption

from mpviz.app.launch import CONFIG, SERVE, app_command, streamlit_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)]
    subprocess.run(build, check=True, capture_output=True)
    (path,) = out.glob("mpviz-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_holds_only_mpviz_with_its_words_stepper_and_app(wheel):
    names = wheel.namelist()
    assert {n.split("/")[0] for n in names} == {"mpviz", *(n.split("/")[0] for n in names if ".dist-info/" in n)}
    for lang in ("en", "zh"):
        assert f"mpviz/locales/{lang}/common.toml" in names
    for shipped in ("stepper.js", "stepper.css", "stepper.html", "notebook.js", "export.html"):
        assert f"mpviz/presentation/static/{shipped}" in names
    assert {"mpviz/app/config.toml", "mpviz/app/serve.py", "mpviz/app/static/style.css"} <= set(names)
    assert {f"mpviz/pages/{p.name}" for p in (ROOT / "mpviz" / "pages").glob("*.py")} <= set(names)
    entry_points = wheel.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "mpviz = mpviz.__main__:main" in entry_points


def test_the_extras_split_the_engine_from_the_notebook_and_the_app():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sorted(d.split("=")[0] for d in project["dependencies"]) == ["ml_dtypes", "numpy>", "torch"]
    extras = project["optional-dependencies"]
    assert [d.split("=")[0] for d in extras["notebook"]] == ["anywidget"]
    assert "streamlit==1.67.0" in extras["app"] and not any("streamlit" in d for d in extras["notebook"])


def test_a_checkout_runs_the_packaged_streamlit_settings():
    """`.streamlit/config.toml` (read by `streamlit run app.py` in a checkout) is the package's own file."""
    assert (ROOT / ".streamlit" / "config.toml").resolve() == Path(str(CONFIG)).resolve()


def test_mpviz_app_hands_streamlit_every_setting_under_its_own_variable_names():
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    env = streamlit_env({})
    for section, options in config.items():
        for key, value in options.items():
            name = ConfigOption(f"{section}.{key}").env_var  # Streamlit's own name for the option's variable
            assert name in env, name
            assert env[name] == (" ".join(value) if isinstance(value, list) else str(value).lower()), name
    assert streamlit_env({"STREAMLIT_SERVER_ADDRESS": "0.0.0.0"})["STREAMLIT_SERVER_ADDRESS"] == "0.0.0.0"
    cmd = app_command(8600, "0.0.0.0", ["--server.runOnSave=true"])
    assert cmd[1:5] == ["-m", "streamlit", "run", str(SERVE)]
    assert cmd[5:] == ["--server.port=8600", "--server.address=0.0.0.0", "--server.runOnSave=true"]


def test_importing_mpviz_starts_no_process():
    code = (
        "import subprocess, os\n"
        "started = []\n"
        "real = subprocess.Popen.__init__\n"
        "def spy(self, *a, **k):\n"
        "    started.append(a[0] if a else k.get('args'))\n"
        "    real(self, *a, **k)\n"
        "subprocess.Popen.__init__ = spy\n"
        "os.fork = lambda: started.append('fork')\n"
        "import mpviz, mpviz.presentation.notebook\n"
        "print(started)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_showing_a_widget_changes_no_global():
    importlib.import_module("torch._dynamo")  # torch sets TORCHINDUCTOR_CACHE_DIR on this import: before the snapshot

    import mpviz

    model, x = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)), torch.randn(3, 4)
    before = (dict(os.environ), pio.templates.default, torch.get_default_dtype(), torch.is_grad_enabled())
    widget = mpviz.show(model, x, dtype="bf16")
    assert widget.bundle["counts"]["events"] > 0
    after = (dict(os.environ), pio.templates.default, torch.get_default_dtype(), torch.is_grad_enabled())
    assert after == before
    assert not torch.is_autocast_enabled("cpu")


@pytest.mark.slow
def test_an_install_outside_the_checkout_shows_a_model_and_writes_a_lesson_file(wheel, tmp_path):
    """The checkout's wheel installed with its `[notebook]` extra into a fresh venv (what `pip install
    "<checkout>[notebook]"` builds and installs), then from elsewhere: `mpviz.show` without Streamlit and with no
    path edit, and `python -m mpviz export`. The venv sees this machine's packages (torch is already installed
    here); mpviz itself must come from the install, never from the checkout. This interpreter's pip installs into
    the venv (`pip --python`): a pip of the venv's own would cost ensurepip's tens of seconds."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # its dependencies: already here
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", f"{wheel.filename}[notebook]"]
    subprocess.run(install, check=True, capture_output=True, cwd=tmp_path)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = (
        "import sys; sys.modules['streamlit'] = None\n"
        "import torch, mpviz\n"
        "assert 'site-packages' in mpviz.__file__, mpviz.__file__\n"
        "w = mpviz.show(torch.nn.Linear(4, 2), torch.randn(3, 4), dtype='bf16')\n"
        "print(w.bundle['counts']['events'], len(w._stepper_js))\n"
    )
    shown = subprocess.run([str(python), "-c", code], cwd=tmp_path, env=clean, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr[-2000:]
    events, stepper_js = map(int, shown.stdout.split())
    assert events > 0 and stepper_js > 10_000
    lesson = tmp_path / "lesson.html"
    export = [
        str(python),
        "-m",
        "mpviz",
        "export",
        "--out",
        str(lesson),
        "--seq",
        "4",
        "--dim",
        "8",
        "--heads",
        "2",
    ]
    done = subprocess.run(export, cwd=tmp_path, env=clean, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert lesson.stat().st_size > 100_000
