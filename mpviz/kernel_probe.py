"""Probing the low-precision CPU kernels in a child process, and capping oneDNN's ISA where they crash.

Some machines advertise an instruction set they fault on (a VM whose CPU flags list AMX, amx_bf16, but whose
hypervisor traps it): the first bfloat16 matmul then kills the whole process with SIGILL, which for a server means
every connected session. oneDNN reads its `ONEDNN_MAX_CPU_ISA` environment variable once, when it first picks a
JIT kernel (not when torch is imported; see oneDNN's "CPU dispatcher control"), so a cap set in this process's
environment before the first oneDNN kernel runs keeps it on older, working instructions.

`ensure_safe_kernels()` is the entry point; `mpviz/__init__.py` calls it before any mpviz computation can run:

- It runs bfloat16 and float16 matmul, softmax and layer_norm in a child process (`python -P <this file>`: the
  child imports torch only, so a fault kills the child alone), once per machine (CPU model and flags), torch build
  and ISA setting; the outcome is stored in the policy probe's cache directory (`mpviz.policy.cache_dir`).
- If the child dies by a signal, it sets `ONEDNN_MAX_CPU_ISA=ISA_CAP` in this process's environment (inherited by
  worker and probe processes) and probes again under the cap to confirm.
- Each kernel's result is hashed (its bits, from fixed inputs that include products too small for a normal
  float32), so the two runs can be compared on the kernels both finished: a cap can change results (older
  instructions round and flush tiny values differently), and what is said about it is what was measured here.
- A `ONEDNN_MAX_CPU_ISA` the user set always wins: it is never changed; the probe then runs under it.

The outcome is a `KernelProbe`, which the attention page and `python -m mpviz bench` report. The module imports
only the standard library at the top so that running it as the child cannot pull in mpviz itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import signal
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path

ISA_ENV = "ONEDNN_MAX_CPU_ISA"
ISA_CAP = "AVX512_CORE_FP16"  # below AMX: the newest ISA whose bf16/fp16 kernels need no AMX tiles
CAPPED_BY_MPVIZ = "MPVIZ_ONEDNN_CAPPED"  # set beside the cap, so a child that inherits both knows it is ours
FAULT_ENV = "MPVIZ_KERNEL_PROBE_FAULT"  # tests only: a signal name the uncapped child raises against itself
PROBE_VERSION = 2  # bump when the kernels probed or the stored fields change: invalidates the disk cache
TIMEOUT_S = 120
KERNELS = ("matmul", "softmax", "layer_norm")
DTYPES = ("bfloat16", "float16")


@dataclass(frozen=True)
class KernelProbe:
    """What the low-precision kernel probe found, and what this process does about it.

    ok: the kernels ran in a child with this process's final ISA setting (False also when the probe could not
    run at all: `error` says why). crashed_signal: the signal that killed the probe before any cap (None if it
    did not crash); crashed_kernel: the kernel it was running then ("matmul bfloat16"). isa_cap_applied: the
    cap mpviz set (None if none). user_isa: the user's own ONEDNN_MAX_CPU_ISA (then mpviz sets nothing).
    compared: with a cap applied, the kernels ("softmax float16") that both the default run, before its crash,
    and the capped run finished; differed: those of them whose result bits differ between the two runs.
    """

    ok: bool
    crashed_signal: int | None = None
    crashed_kernel: str | None = None
    isa_cap_applied: str | None = None
    user_isa: str | None = None
    error: str | None = None
    compared: tuple[str, ...] = ()
    differed: tuple[str, ...] = ()

    @property
    def signal_name(self) -> str | None:
        """ "SIGILL" for a crash by signal 4 (the number where the OS has no name)."""
        if self.crashed_signal is None:
            return None
        try:
            return signal.Signals(self.crashed_signal).name
        except ValueError:
            return str(self.crashed_signal)


# ── the child ───────────────────────────────────────────────────────────────────────────────────────────────
def _run_kernels_here() -> None:
    """Run each kernel once, printing its name first, so that the parent knows which one a crash hit, and then
    `= <hash of the result's bits>`, so that runs under different ISA settings can be compared."""
    import torch  # here, not at the top: the parent may need the cap in its environment before this

    fault = os.environ.get(FAULT_ENV)
    torch.manual_seed(0)
    base = torch.randn(64, 64)
    for dtype_name in DTYPES:
        dtype = getattr(torch, dtype_name)
        a = base.to(dtype)
        # bfloat16: 256 products 2**-65 * 2**-65 = 2**-130, below float32's smallest normal: a kernel that flushes
        # them sums to 0, one that keeps them to 2**-122. float16: 256 * (2**-14)**2 = 2**-20, a float16 subnormal
        tiny = torch.full((1, 256), 2.0**-65 if dtype == torch.bfloat16 else 2.0**-14).to(dtype)
        for kernel in KERNELS:
            print(f"{kernel} {dtype_name}", flush=True)
            if fault and not os.environ.get(ISA_ENV):  # the simulated fault, which the cap (any cap) avoids
                os.kill(os.getpid(), getattr(signal, fault))
            if kernel == "matmul":
                results = [a @ a, tiny @ tiny.T]
            elif kernel == "softmax":
                results = [torch.softmax(a, dim=-1)]
            else:
                results = [torch.nn.functional.layer_norm(a, (64,))]
            bits = "".join(str(r.contiguous().view(torch.int16).flatten().tolist()) for r in results)
            print("= " + hashlib.sha256(bits.encode()).hexdigest()[:16], flush=True)
    print("ok", flush=True)


def _probe_child(isa: str | None) -> dict:
    """One child run with ONEDNN_MAX_CPU_ISA=isa (unset for None): {ok, signal, kernel, error, results}, results
    the hash of the result bits of each kernel it finished ({"matmul bfloat16": "…"})."""
    env = {k: v for k, v in os.environ.items() if k not in (ISA_ENV, CAPPED_BY_MPVIZ)}
    if isa:
        env[ISA_ENV] = isa
    # -P: the script's folder (mpviz/, with modules named like the stdlib's `trace`) stays off sys.path
    args = [sys.executable, "-P", str(Path(__file__).resolve())]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"ok": False, "signal": None, "kernel": None, "error": f"no answer within {TIMEOUT_S} s", "results": {}}
    lines = proc.stdout.strip().splitlines()
    ran = [line for line in lines if not line.startswith("= ")]
    results = {name: line[2:] for name, line in pairwise(lines) if line.startswith("= ")}
    kernel = ran[-1] if ran and ran[-1] != "ok" else None
    if proc.returncode == 0 and ran[-1:] == ["ok"]:
        return {"ok": True, "signal": None, "kernel": None, "error": None, "results": results}
    if proc.returncode < 0:  # died by a signal: the fault this module exists for
        return {"ok": False, "signal": -proc.returncode, "kernel": kernel, "error": None, "results": results}
    tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
    return {"ok": False, "signal": None, "kernel": kernel, "error": tail[0][:300], "results": results}


def compare_results(first: dict, capped: dict | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(kernels both child runs finished, those of them whose result bits differ), in the order they ran."""
    if capped is None:
        return (), ()
    a, b = first.get("results", {}), capped.get("results", {})
    both = tuple(k for k in a if k in b)
    return both, tuple(k for k in both if a[k] != b[k])


# ── cached outcome ──────────────────────────────────────────────────────────────────────────────────────────
def machine_id() -> str:
    """A short hash of this CPU's identity (model name and flags where /proc/cpuinfo has them): a VM moved to
    another host with other flags probes again."""
    try:
        info = Path("/proc/cpuinfo").read_text()
        fields = sorted(set(re.findall(r"^(?:model name|flags|Features)\s*:\s*(.*)$", info, re.MULTILINE)))
    except OSError:
        fields = [platform.processor()]
    return hashlib.sha256("\n".join([platform.machine(), *fields]).encode()).hexdigest()[:12]


def _cache_file(isa: str | None) -> Path:
    from mpviz.policy import cache_dir, torch_build  # imports torch, which is safe: oneDNN has not started

    setting = re.sub(r"[^\w]", "_", isa or "default")
    return cache_dir() / f"kernel-probe-{machine_id()}-{torch_build()}-{setting}-v{PROBE_VERSION}.json"


def _probed(isa: str | None) -> dict:
    """The outcome for ISA setting `isa`: {"first": child run as set, "capped": run under ISA_CAP or None}."""
    path = _cache_file(isa)
    try:
        stored = json.loads(path.read_text())
        if isinstance(stored, dict) and set(stored) == {"first", "capped"}:
            return stored
    except (OSError, ValueError):  # missing or damaged: probe again
        pass
    first = _probe_child(isa)
    capped = _probe_child(ISA_CAP) if first["signal"] is not None and isa is None else None
    outcome = {"first": first, "capped": capped}
    if first["error"] and first["error"].startswith("no answer"):  # a slow machine today: ask again next time
        return outcome
    try:  # write atomically; an unwritable cache only costs a probe in the next process
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(outcome))
        os.replace(tmp, path)
    except OSError:
        pass
    return outcome


_lock = threading.Lock()
_outcome: KernelProbe | None = None


def ensure_safe_kernels() -> KernelProbe:
    """Probe (or read the stored probe), cap oneDNN's ISA in os.environ if the kernels crash, return the outcome.

    Idempotent and cheap after the first call in a process. Must run before the first oneDNN kernel of this
    process (a cap set later is ignored by oneDNN); a worker that inherited mpviz's cap reports it as mpviz's.
    """
    global _outcome
    with _lock:
        if _outcome is None:
            _outcome = _decide()
        return _outcome


def _decide() -> KernelProbe:
    current = os.environ.get(ISA_ENV) or None
    ours = current is not None and os.environ.get(CAPPED_BY_MPVIZ) == current
    if current is not None and not ours:  # the user's setting wins: probe under it, change nothing
        first = _probed(current)["first"]
        return KernelProbe(first["ok"], first["signal"], first["kernel"], None, current, first["error"])
    outcome = _probed(None)
    first, capped = outcome["first"], outcome["capped"]
    if first["signal"] is None:
        return KernelProbe(first["ok"], error=first["error"])
    os.environ[ISA_ENV] = os.environ[CAPPED_BY_MPVIZ] = ISA_CAP
    ok = bool(capped and capped["ok"])
    error = None if ok else (capped or {}).get("error") or "the capped probe crashed too"
    compared, differed = compare_results(first, capped)
    return KernelProbe(ok, first["signal"], first["kernel"], ISA_CAP, None, error, compared, differed)


def probe_dict(probe: KernelProbe) -> dict:
    """The outcome as plain JSON-able data (for `bench --json`)."""
    return {**asdict(probe), "signal_name": probe.signal_name}


if __name__ == "__main__":  # the child process of `_probe_child`
    _run_kernels_here()
