"""Benchmark of `mpviz.show` on your own model at real size: a GPT-2-small step (12 layers, d=768, 12 heads, 64
tokens, CPU bf16 autocast), built from a transformers config (no download), traced with and without the float64
reference, against the same forward + backward untraced.

    python tests/bench/realsize.py [--layers 12] [--d 768] [--heads 12] [--tokens 64] [--rounds 2]
    python tests/bench/realsize.py --dtype off  # the same step in float32: the tracer's own overhead, no bf16 kernels
    python tests/bench/realsize.py --stats      # per-output statistics cost at three tensor sizes

Each variant runs in a child process of its own, so its peak resident memory (ru_maxrss) is its own; the rounds
alternate the variants (untraced, reference on, reference off), so a slow spell of a shared machine lands on all
of them. Printed: wall time of the step (the model built before the clock starts), the child's peak RSS and its RSS
with the model built, ops and payload bytes. Not a test: benchmarks measure, tests assert.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _rss_mb() -> float:
    """This process's current resident memory (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def build(layers: int, d: int, heads: int, tokens: int):
    import torch
    import transformers

    cfg = transformers.GPT2Config(n_layer=layers, n_embd=d, n_head=heads, n_positions=max(tokens, 64), use_cache=False)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, tokens))
    return model, ids


def child(variant: str, layers: int, d: int, heads: int, tokens: int, dtype: str = "bf16") -> dict:
    """One variant, in this (child) process: its wall time, peak RSS and what it made."""
    import torch

    model, ids = build(layers, d, heads, tokens)
    built = _rss_mb()
    out: dict = {"variant": variant, "built_mb": built}
    start = time.perf_counter()
    if variant == "untraced":
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype != "off"):
            loss = model(ids, labels=ids).loss
        loss.backward()
    else:
        import mpviz

        w = mpviz.show(model, ids, kwargs={"labels": ids}, dtype=dtype, reference=variant == "reference")
        out["ops"] = len(w.bundle["events"])
        out["payload_bytes"] = len(w.payload)
    out["seconds"] = time.perf_counter() - start
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def stats_cost() -> list[dict]:
    """Per-output statistics at three sizes: `mpviz.trace` of one elementwise op with and without statistics, as
    `mpviz.show` measures them (sampled past its SAMPLE_ABOVE; all exact where this tree has no sampling)."""
    import functools

    import torch

    from mpviz.trace import trace

    try:
        from mpviz.model_bundle import SAMPLE_ABOVE

        trace = functools.partial(trace, sample_above=SAMPLE_ABOVE)
    except ImportError:  # the tree before sampling
        pass

    rows = []
    for shape in ((64, 768), (64, 3072), (768, 3072)):
        x = torch.randn(shape)
        mod = torch.nn.Identity()
        times = {}
        for stats in (False, True, False, True):
            start = time.perf_counter()
            for _ in range(20):
                with trace(mod, keep_stats=stats):
                    torch.mul(x, 1.5)
            times[stats] = min(times.get(stats, 1e9), (time.perf_counter() - start) / 20)
        rows.append({"shape": shape, "numel": x.numel(), "us_per_output": (times[True] - times[False]) * 1e6})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--d", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--dtype", default="bf16", choices=("bf16", "off"))
    p.add_argument("--variants", default="untraced,reference,no_reference")
    p.add_argument("--stats", action="store_true")
    p.add_argument("--child")
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.layers, a.d, a.heads, a.tokens, a.dtype)))
        return
    if a.stats:
        for row in stats_cost():
            print(f"{row['shape']!s:>14} {row['numel']:>10,} elements: {row['us_per_output']:9.0f} µs per output")
        return
    size = ["--layers", str(a.layers), "--d", str(a.d), "--heads", str(a.heads), "--tokens", str(a.tokens)]
    size += ["--dtype", a.dtype]
    print(f"GPT-2 {a.layers} layers, d={a.d}, {a.heads} heads, {a.tokens} tokens, CPU autocast {a.dtype}")
    for r in range(a.rounds):
        for variant in a.variants.split(","):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", variant, *size], capture_output=True, text=True, cwd=ROOT
            )
            if proc.returncode:
                print(f"round {r} {variant}: failed: {proc.stderr.strip()[-400:]}")
                continue
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            extra = f", {row['ops']:,} ops, payload {row['payload_bytes']:,} B" if "ops" in row else ""
            print(
                f"round {r} {variant:>13}: {row['seconds']:6.2f} s, peak {row['peak_mb']:6.0f} MB "
                f"(model built: {row['built_mb']:5.0f} MB){extra}",
                flush=True,
            )


if __name__ == "__main__":
    main()
