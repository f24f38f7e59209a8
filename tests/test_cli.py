"""`python -m mpviz`: JSON shape, readable tables, and the contract on hostile input.

Every test but two calls `main(argv)` in-process; those two start `python -m mpviz` as a shell would (marked slow:
each child imports torch). The contract (module doc of mpviz.__main__): bad input exits 2
with exactly one line on stderr and nothing on stdout; success with --json prints one strict JSON document;
output is ASCII whatever the terminal's encoding; a reader that goes away ends the run quietly with 141.
"""

from __future__ import annotations

import errno
import inspect
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mpviz import __main__ as cli
from mpviz import softmax as sm
from mpviz.attention import trace_attention
from mpviz.bench import run_bench
from mpviz.cli.training import train_config
from mpviz.formats import ROUNDINGS
from mpviz.kernel_probe import KernelProbe
from mpviz.model import ATTENTION_KINDS, SOFTMAX_KINDS, AttentionConfig, ConfigError
from mpviz.scaler import TrainConfig
from mpviz.timing import REPEAT_LIMITS
from tests.cli import CliResult, run_cli

ROOT = Path(__file__).resolve().parents[1]


def _strict_json(text: str) -> object:
    def refuse(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_trace_json_has_the_documented_shape(capsys):
    args = ("trace", "--device", "cpu", "--dtype", "bf16", "--seq", "8", "--dim", "32", "--heads", "2", "--json")
    r = run_cli(capsys, *args)
    assert r.returncode == 0, r.stderr
    d = _strict_json(r.stdout)
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


def test_trace_json_writes_inf_and_nan_as_strings(capsys):
    r = run_cli(capsys, "trace", "--dtype", "fp16", "--softmax", "naive", "--input-scale", "10", "--seq", "8", "--json")
    assert r.returncode == 0, r.stderr
    assert '"nan"' in r.stdout or '"inf"' in r.stdout
    _strict_json(r.stdout)


def test_trace_table_is_readable(capsys):
    r = run_cli(capsys, "trace", "--dtype", "off", "--seq", "4", "--dim", "16", "--heads", "2")
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
        [],
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, capsys):
    _assert_usage_error(run_cli(capsys, *args))


def _assert_usage_error(r: CliResult) -> None:
    assert r.returncode == 2, r
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1 and r.stderr.endswith("\n"), r
    assert "error" in r.stderr and "Traceback" not in r.stderr and r.stderr.isascii()


def test_bench_reports_a_row_per_config():
    rows = run_bench(repeat=1, configs={"tiny": (AttentionConfig(seq_len=4, d_model=16, n_heads=2), "bf16")})
    assert len(rows) == 1 and rows[0].events > 0 and rows[0].traced_ms > 0 and rows[0].ratio > 0
    assert rows[0].relative_spread == 0  # one round: no spread to speak of


def test_bench_prints_its_rows_and_the_class_run_as_a_table_and_as_json(monkeypatch, capsys):
    from mpviz import bench
    from mpviz.cli import attention as cli_attention

    rows = run_bench(repeat=1, configs={"tiny": (AttentionConfig(seq_len=4, d_model=16, n_heads=2), "bf16")})
    monkeypatch.setattr(cli_attention, "run_bench", lambda repeat: rows)
    monkeypatch.setattr(cli_attention, "page_run", lambda: bench.PageRun("dtype=bf16", 30, 8.5, 1.2, 0.25, 0.31, True))
    capped = KernelProbe(True, 4, "matmul bfloat16", "AVX512_CORE_FP16")
    monkeypatch.setattr(cli_attention, "ensure_safe_kernels", lambda: capped)
    assert cli.main(["bench", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "tiny" in out and "30 fresh sessions" in out and "p95 0.31 s" in out
    assert "crashed with SIGILL in matmul bfloat16; oneDNN capped at ONEDNN_MAX_CPU_ISA=AVX512_CORE_FP16" in out
    assert cli.main(["bench", "--repeat", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["page_run"]["p95_s"] == 0.31 and doc["results"][0]["name"] == "tiny"
    assert doc["kernels"]["isa_cap_applied"] == "AVX512_CORE_FP16" and doc["kernels"]["signal_name"] == "SIGILL"


@pytest.mark.parametrize("repeat", [0, -1, REPEAT_LIMITS.max_repeat + 1, 10**20, 1.5, True, "5"])
def test_bench_repeat_limits_are_enforced_in_the_engine_before_any_work(repeat):
    with pytest.raises(ConfigError) as e:
        run_bench(repeat=repeat, configs={"never run": (AttentionConfig(seq_len=10**6), "bf16")})
    assert e.value.field == "repeat"


# ── one name per knob, choices read from the engine ────────────────────────────────────────────────────────
def test_the_loss_multiplier_has_one_name_and_the_old_flag_still_works():
    parser = cli.build_parser()
    args = parser.parse_args(["scaler", "--loss-multiplier", "0.5"])
    old = parser.parse_args(["scaler", "--loss-scale-multiplier", "0.5"])
    assert args.loss_multiplier == old.loss_multiplier == 0.5
    assert train_config(args).loss_multiplier == 0.5  # the engine's TrainConfig field of the same name
    assert "--loss-scale-multiplier" not in _help(parser, "scaler")  # hidden alias


def _help(parser, command: str) -> str:
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return sub.format_help()


def _option(parser, command: str, flag: str):
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return next(a for a in sub._actions if flag in a.option_strings)


def test_choices_and_defaults_come_from_the_engine():
    p = cli.build_parser()
    base, train = AttentionConfig(), TrainConfig()
    trace_defaults = inspect.signature(trace_attention).parameters
    assert _option(p, "trace", "--attention").choices == ATTENTION_KINDS
    assert _option(p, "trace", "--softmax").choices == SOFTMAX_KINDS
    assert _option(p, "trace", "--dtype").default == trace_defaults["dtype"].default
    assert _option(p, "trace", "--device").default == trace_defaults["device"].default
    for flag, field in (("--seq", "seq_len"), ("--dim", "d_model"), ("--heads", "n_heads"), ("--seed", "seed")):
        assert _option(p, "trace", flag).default == getattr(base, field)
        assert _option(p, "scaler", flag).default == getattr(train.model, field)
    for flag, field in (("--steps", "steps"), ("--lr", "lr"), ("--accum", "accum"), ("--clip", "clip")):
        assert _option(p, "recipes", flag).default == getattr(train, field)
    assert _option(p, "scaler", "--dtype").default == train.dtype
    assert _option(p, "scaler", "--loss-multiplier").default == train.loss_multiplier
    assert _option(p, "bits", "--rounding").choices == ROUNDINGS
    assert _option(p, "softmax", "--scenario").choices == sm.SCENARIO_NAMES
    assert _option(p, "softmax", "--loss").choices == sm.LOSSES
    assert _option(p, "softmax", "--method").choices == ("all", *sm.METHODS)


# ── hostile input: every subcommand, every flag ─────────────────────────────────────────────────────────────
HOSTILE = {
    "nan": "nan",
    "inf": "inf",
    "-inf": "-inf",
    "negative": "-3",
    "huge": "9" * 40,
    "empty": "",
    "unicode": "\uff58\u03c0\u2713\u202e",  # fullwidth x, pi, a check mark, a right-to-left override
    "wrong_type": "[1, 2]",
    "fraction": "2.5",
    "long": "x" * 100_000,
}
# subcommand → (arguments that make a cheap valid run, its flags that take a value)
COMMANDS = {
    "trace": (
        ["--seq", "4", "--dim", "8", "--heads", "2"],
        [
            "--device",
            "--dtype",
            "--seq",
            "--dim",
            "--heads",
            "--vocab",
            "--attention",
            "--softmax",
            "--input-scale",
            "--seed",
        ],
    ),
    "bench": ([], ["--repeat"]),
    "bits": (["1", "--format", "fp16"], ["--format", "--rounding"]),
    "softmax": (["--logits", "1,2"], ["--logits", "--scenario", "--dtype", "--method", "--loss", "--head", "--row"]),
    "scaler": (
        ["--steps", "2", "--seq", "4", "--dim", "8", "--heads", "2"],
        [
            "--device",
            "--steps",
            "--loss-multiplier",
            "--loss-scale-multiplier",
            "--clip",
            "--accum",
            "--lr",
            "--seq",
            "--dim",
            "--heads",
            "--seed",
            "--dtype",
            "--init-scale",
            "--growth-factor",
            "--backoff-factor",
            "--growth-interval",
            "--inject-inf",
        ],
    ),
    "recipes": (
        ["--steps", "1", "--seq", "4", "--dim", "8", "--heads", "2"],
        [
            "--device",
            "--steps",
            "--loss-multiplier",
            "--loss-scale-multiplier",
            "--clip",
            "--accum",
            "--lr",
            "--seq",
            "--dim",
            "--heads",
            "--seed",
        ],
    ),
    "policy": ([], ["--device"]),
    "claims": ([], ["--id"]),
    "fp8": ([], ["--recipe", "--outlier", "--seq", "--dim", "--heads", "--seed"]),
    "lessons": ([], []),
    "export": (
        ["--out", "lesson.html", "--seq", "4", "--dim", "8", "--heads", "2"],
        [
            "--out",
            "--lang",
            "--device",
            "--dtype",
            "--seq",
            "--dim",
            "--heads",
            "--vocab",
            "--attention",
            "--softmax",
            "--input-scale",
            "--seed",
        ],
    ),
}
# flags that need another base to reach the engine: a row of a traced run, a scenario instead of logits
BASE_FOR = {
    ("softmax", "--scenario"): [],
    ("softmax", "--head"): ["--scenario", "trace"],
    ("softmax", "--row"): ["--scenario", "trace"],
}
CASES = [
    pytest.param(command, [*BASE_FOR.get((command, flag), base), flag, value], id=f"{command} {flag} {kind}")
    for command, (base, flags) in COMMANDS.items()
    for flag in flags
    for kind, value in HOSTILE.items()
]
CASES += [pytest.param("bits", [value, "--format", "e4m3"], id=f"bits VALUE {kind}") for kind, value in HOSTILE.items()]
CONFLICTS = [
    pytest.param("softmax", ["--logits", "1,2", "--scenario", "close"], id="softmax logits and scenario"),
    pytest.param("softmax", ["--logits", "1,2", "--row", "0"], id="softmax row without a trace"),
    pytest.param("softmax", ["--scenario", "peak", "--head", "1"], id="softmax head without a trace"),
    pytest.param("scaler", ["--no-scaler", "--growth-factor", "3"], id="scaler no-scaler with scaler settings"),
    pytest.param("bits", ["1", "2", "--format", "fp16"], id="bits two values"),
    pytest.param("trace", ["--attention", "sdpa", "--attention"], id="trace flag without its value"),
]


SERVES = {"app"}  # replaces this process with a server (os.execve): tested below with execve caught, not in the corpus


def test_the_corpus_covers_every_flag_of_every_subcommand():
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert set(commands) == set(COMMANDS) | SERVES
    for name, sub in commands.items():
        if name in SERVES:
            continue
        valued = {s for a in sub._actions if a.nargs != 0 and a.option_strings for s in a.option_strings}
        assert valued == set(COMMANDS[name][1]), name


def test_app_serves_the_installed_app_with_its_settings_and_refuses_a_bad_port(capsys, monkeypatch):
    started = []
    monkeypatch.setattr(os, "execve", lambda path, argv, env: started.append((argv, env)))
    r = run_cli(capsys, "app", "--port", "8600", "--", "--server.runOnSave=true")
    assert r.returncode == 0 and len(started) == 1
    argv, env = started[0]
    assert argv[1:4] == ["-m", "streamlit", "run"] and argv[4].endswith("mpviz/app/serve.py")
    assert argv[5:] == ["--server.port=8600", "--server.runOnSave=true"]
    assert env["STREAMLIT_SERVER_HEADLESS"] == "true" and env["STREAMLIT_RUNNER_POST_SCRIPT_GC"] == "false"
    for port in ("0", "70000", "-5", "x", "1e3"):
        refused = run_cli(capsys, "app", "--port", port)
        assert refused.returncode == 2, port
        _assert_usage_error(refused)
    assert len(started) == 1


@pytest.mark.parametrize(("command", "args"), CASES + CONFLICTS)
def test_hostile_input_is_refused_in_one_line_or_answered_in_strict_json(command, args, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # export writes the file it is asked for (--out "2.5", "[1, 2]" ...): not here
    r = run_cli(capsys, command, *args, "--json")
    assert r.returncode in (0, 2), r
    assert r.stdout.isascii() and r.stderr.isascii()
    if r.returncode == 2:
        _assert_usage_error(r)
        assert len(r.stderr) < 400  # the 100 000-character value is not echoed back whole
    else:
        assert r.stderr == ""
        _strict_json(r.stdout)


def test_conflicting_flags_are_refused(capsys):
    for p in CONFLICTS:
        command, args = p.values
        _assert_usage_error(run_cli(capsys, command, *args))


# ── streams ─────────────────────────────────────────────────────────────────────────────────────────────────
class _Stdout(io.StringIO):
    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def write(self, text: str) -> int:
        if text:
            raise self.error
        return 0


def test_closed_or_full_stdout_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", None)
    assert cli.main(["bits", "1", "--format", "fp16"]) == 2
    monkeypatch.setattr(sys, "stdout", _Stdout(OSError(errno.ENOSPC, "No space left on device")))
    assert cli.main(["bits", "1", "--format", "fp16"]) == 2
    monkeypatch.undo()
    assert capsys.readouterr().err.splitlines() == [
        "python -m mpviz bits: error: stdout is closed",
        "python -m mpviz bits: error: cannot write output: No space left on device",
    ]


def test_a_reader_that_goes_away_ends_the_run_quietly(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _Stdout(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert cli.main(["bits", "1", "--format", "fp16"]) == cli.EXIT_PIPE == 141
    monkeypatch.undo()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "args",
    [
        ["scaler", "--steps", "2", "--seq", "4", "--dim", "8", "--heads", "2", "--inject-inf", "-1,5"],
        ["bits", "-1e-3", "--format", "fp16"],
        ["bits", "-inf", "--format", "fp16"],
        ["softmax", "--logits", "-1,2"],
        ["trace", "--seq", "4", "--dim", "8", "--heads", "2", "--input-scale", "-1e-3"],
    ],
)
def test_negative_numbers_are_values_where_numbers_are_expected(args, capsys):
    """argparse alone reads "-1,5" or "-1e-3" as an unknown option: the value must reach its own check instead."""
    r = run_cli(capsys, *args)
    assert "expected one argument" not in r.stderr and "unrecognized arguments" not in r.stderr, r.stderr
    assert "required" not in r.stderr, r.stderr
    if args[0] == "scaler":  # a step list with a negative step: refused by the engine, which names the step
        assert r.returncode == 2 and "inject_inf=-1" in r.stderr
    else:
        assert r.returncode in (0, 2) and (r.returncode == 0) == (r.stderr == ""), r


def test_an_internal_failure_is_one_line_with_exit_1(monkeypatch, capsys):
    def boom(args) -> None:
        raise RuntimeError("the probe's child died\nwith two lines")

    monkeypatch.setitem(cli.COMMANDS, "bits", (cli.COMMANDS["bits"][0], boom))
    monkeypatch.delenv("MPVIZ_DEBUG", raising=False)
    r = run_cli(capsys, "bits", "1", "--format", "fp16")
    assert r.returncode == 1 and r.stdout == "" and len(r.stderr.splitlines()) == 1
    assert "internal error: RuntimeError: the probe's child died with two lines" in r.stderr
    monkeypatch.setenv("MPVIZ_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["bits", "1", "--format", "fp16"])


def test_output_is_the_same_ascii_whatever_the_terminal(capsys):
    r = run_cli(capsys, "softmax", "--scenario", "long", "--dtype", "bf16", "--method", "torch")
    assert r.returncode == 0 and r.stdout.isascii() and "... (4096 values)" in r.stdout
    r = run_cli(capsys, "bits", "\uff15", "--format", "fp16")  # fullwidth 5: a valid decimal digit to Python
    assert r.returncode == 0 and "input         \\uff15" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["trace", "--seq", "4", "--dim", "8", "--heads", "2", "--bundle"],  # ~170 KB: more than a pipe holds
        ["bits", "1", "--format", "fp16"],  # ~300 bytes: all of it fits in the pipe before the reader leaves
    ],
)
def test_a_reader_that_takes_10_bytes_and_leaves_gets_141(args, monkeypatch, capsys):
    """`python -m mpviz ... | head -c 10`, long output or short: 141, nothing on stderr. In-process, over a real pipe
    whose reader takes 10 bytes and closes its end: the blocked write, the EPIPE and the wait for a reader that
    left are the kernel's, as in a shell; the child-process test below adds the interpreter's start and exit."""
    read_end, write_end = os.pipe()
    taken = []

    def head_c_10() -> None:
        got = b""
        while len(got) < 10 and (chunk := os.read(read_end, 10 - len(got))):
            got += chunk
        taken.append(got)
        os.close(read_end)

    reader = threading.Thread(target=head_c_10)
    reader.start()
    with open(write_end, "w", encoding="ascii") as pipe:
        monkeypatch.setattr(sys, "stdout", pipe)
        code = cli.main(list(args))
        monkeypatch.undo()
    reader.join(timeout=120)
    assert taken[0] and len(taken[0]) == 10
    assert code == 141 and capsys.readouterr().err == ""


@pytest.mark.slow  # three interpreters that import torch: the quick run keeps the in-process tests of each case
def test_real_exit_codes_and_streams_in_a_child_process():
    """What a shell sees (exit status, bytes on each stream, a closed pipe, the interpreter's exit): a child each."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    cmd = [sys.executable, "-m", "mpviz"]
    ok = subprocess.run([*cmd, "softmax", "--scenario", "long"], cwd=ROOT, env=env, capture_output=True)
    assert ok.returncode == 0 and ok.stderr == b"" and ok.stdout.isascii() and b"float8_e4m3fn" in ok.stdout

    bad = subprocess.run([*cmd, "scaler", "--device", "cuda-nope"], cwd=ROOT, env=env, capture_output=True)
    assert bad.returncode == 2 and bad.stdout == b"" and bad.stderr.count(b"\n") == 1

    gone = subprocess.Popen(
        [*cmd, "softmax", "--scenario", "long"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    gone.stdout.close()  # the reader leaves before the first byte (like `| head -0`)
    err = gone.stderr.read()
    assert gone.wait(timeout=120) == 141 and err == b""


@pytest.mark.slow  # a fresh interpreter that imports torch, since the blocked imports must not be loaded already
def test_the_cli_runs_with_the_engine_s_needs_alone():
    """A GPU box with torch, numpy and ml_dtypes but no plotly or Streamlit runs every command but `export` (whose
    colours come from the view's palette): seen on a CUDA machine, where the eager import failed `trace` too."""
    blocked = "import sys; sys.modules.update(plotly=None, streamlit=None); from mpviz.__main__ import main; "
    run = subprocess.run(
        [sys.executable, "-c", blocked + "sys.exit(main(['bits', '1', '--format', 'fp16', '--json']))"],
        cwd=ROOT,
        capture_output=True,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert json.loads(run.stdout)["format"] == "float16"


def test_lessons_lists_the_registry_and_trace_bundle_is_the_lesson_json(capsys):
    from mpviz.app.lessons import LESSONS

    listed = json.loads(run_cli(capsys, "lessons", "--json").stdout)["lessons"]
    assert [entry["slug"] for entry in listed] == [entry.slug for entry in LESSONS]
    bundle = json.loads(run_cli(capsys, "trace", "--seq", "4", "--dim", "8", "--heads", "2", "--bundle").stdout)
    assert bundle["schema"] == 1 and bundle["counts"]["events"] == len(bundle["events"])
