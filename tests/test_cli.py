"""`python -m mpviz trace|bench`: JSON shape, readable table, and exit status 2 with one line on bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mpviz.bench import run_bench
from mpviz.model import AttentionConfig

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mpviz", *args], cwd=ROOT, capture_output=True, text=True)


def test_trace_json_has_the_documented_shape():
    r = _cli("trace", "--device", "cpu", "--dtype", "bf16", "--seq", "8", "--dim", "32", "--heads", "2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["device"] == "cpu" and d["autocast_dtype"] == "bfloat16"
    assert d["config"]["seq_len"] == 8 and d["config"]["n_heads"] == 2
    ev = d["events"][0]
    assert {"index", "phase", "module", "op", "inputs", "outputs", "autocast_cast", "landmark"} <= set(ev)
    q = next(e for e in d["events"] if e["landmark"] == "q")
    assert q["op"] == "aten.addmm.default" and q["outputs"][0]["dtype"] == "bfloat16"
    assert q["outputs"][0]["shape"] == [8, 32] and "abs_max" in q["outputs"][0]["stats"]
    assert all("stats" not in i for i in q["inputs"])
    assert {"backward"} <= {e["phase"] for e in d["events"]}
    assert set(d["reference_error"]["probs"]) == {"rel", "abs_rms", "ref_rms", "max_abs", "nonfinite"}


def test_trace_json_writes_inf_and_nan_as_strings():
    r = _cli("trace", "--dtype", "fp16", "--softmax", "naive", "--input-scale", "10", "--seq", "8", "--json")
    assert r.returncode == 0, r.stderr
    assert '"nan"' in r.stdout or '"inf"' in r.stdout
    json.loads(r.stdout)  # strict JSON: no bare NaN/Infinity


def test_trace_table_is_readable():
    r = _cli("trace", "--dtype", "off", "--seq", "4", "--dim", "16", "--heads", "2")
    assert r.returncode == 0
    assert "aten.addmm.default" in r.stdout and "no inf/nan created" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["trace", "--dtype", "xyz"],
        ["trace", "--seq", "99999"],
        ["trace", "--seq", "abc"],
        ["trace", "--heads", "5"],
        ["trace", "--device", "tpu"],
        ["nosuchcommand"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(args):
    r = _cli(*args)
    assert r.returncode == 2
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_bench_reports_a_row_per_config():
    rows = run_bench(repeat=1, configs={"tiny": (AttentionConfig(seq_len=4, d_model=16, n_heads=2), "bf16")})
    assert len(rows) == 1 and rows[0].events > 0 and rows[0].traced_ms > 0 and rows[0].ratio > 0
