"""`mpviz bench --realsize`: `mpviz.show` on your own model at real size, each variant in a child process of its own.

A GPT-2-small step (12 layers, d=768, 12 heads, 64 tokens, CPU bf16 autocast) built from a transformers config (no
download), traced with and without the float64 reference, against the same forward + backward untraced; then a
GPT-2-medium step (24 layers, d=1024, 16 heads) streamed (mpviz.event_chunks): its trace, the kernel's memory, the
first payload and the time the widget takes to answer one chunk of events; and the per-output statistics cost at
three tensor sizes.

Each variant runs in a child process (`python -m mpviz.cli.realsize --child VARIANT ...`), so its peak resident
memory (ru_maxrss) is its own; the rounds alternate the variants, so a slow spell of a shared machine lands on all of
them. Printed: the step's wall time (the model built before the clock starts), the child's peak RSS and its RSS
with the model built, ops and payload bytes. Needs transformers (a test dependency). Not a test: benchmarks measure,
tests assert.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

__all__ = ["GPT2", "MEDIUM", "SMALL", "run_realsize", "stats_cost"]


@dataclass(frozen=True)
class GPT2:
    """A GPT-2 built from its config: the size of one benchmarked step."""

    layers: int
    d: int
    heads: int
    tokens: int = 64

    def args(self) -> list[str]:
        sizes = {"--layers": self.layers, "--d": self.d, "--heads": self.heads, "--tokens": self.tokens}
        return [str(v) for pair in sizes.items() for v in pair]

    def __str__(self) -> str:
        return f"GPT-2 {self.layers} layers, d={self.d}, {self.heads} heads, {self.tokens} tokens"


SMALL = GPT2(12, 768, 12)
MEDIUM = GPT2(24, 1024, 16)
VARIANTS = ("untraced", "reference", "no_reference")  # the GPT-2-small step's
# GPT-2-medium's step, streamed: its ~5,000 ops fit the caps (MAX_EVENTS, MAX_BYTES), so the bench lowers the byte cap
# to this to make mpviz.show stream it, as a model past the caps would be
STREAM_AT_BYTES = 2**20


def _rss_mb() -> float:
    """This process's current resident memory (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _build(size: GPT2):
    import torch
    import transformers

    cfg = transformers.GPT2Config(
        n_layer=size.layers,
        n_embd=size.d,
        n_head=size.heads,
        n_positions=max(size.tokens, 64),
        use_cache=False,
        loss_type="ForCausalLM",
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, size.tokens))
    return model, ids


def _fetch_ms(w) -> tuple[float, int]:
    """The widget's answer to one chunk request (mpviz.presentation.widget's protocol, its `send` captured): the
    median over every chunk of the milliseconds it takes, and the largest chunk's bytes."""
    sent: list = []
    w.send = lambda content, buffers=None: sent.append(buffers)
    times = []
    for k in range(len(w.chunks.chunks)):
        start = time.perf_counter()
        w._handle_custom_msg({"type": "events", "chunk": k}, [])
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), max(len(b[0]) for b in sent)


def child(variant: str, size: GPT2, dtype: str = "bf16") -> dict:
    """One variant, in this (child) process: its wall time, peak RSS and what it made."""
    import torch

    model, ids = _build(size)
    built = _rss_mb()
    out: dict = {"variant": variant, "built_mb": built}
    start = time.perf_counter()
    if variant == "untraced":
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype != "off"):
            loss = model(ids, labels=ids).loss
        loss.backward()
    else:
        import mpviz

        caps = {"max_bytes": STREAM_AT_BYTES} if variant == "stream" else {}
        reference = variant != "no_reference"
        w = mpviz.show(model, ids, kwargs={"labels": ids}, dtype=dtype, reference=reference, **caps)
        out["seconds"] = time.perf_counter() - start
        out["ops"] = len(w.bundle["events"])
        out["payload_bytes"] = len(w.payload)
        if w.chunks is not None:
            out["kept_bytes"] = w.chunks.nbytes
            out["fetch_ms"], out["chunk_bytes"] = _fetch_ms(w)
            out["rss_after_mb"] = _rss_mb()
    out.setdefault("seconds", time.perf_counter() - start)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def stats_cost() -> list[dict]:
    """Per-output statistics at three sizes: `mpviz.trace` of one elementwise op with and without statistics, as
    `mpviz.show` measures them (sampled past its SAMPLE_ABOVE)."""
    import torch

    from mpviz.model_bundle import SAMPLE_ABOVE
    from mpviz.trace import trace

    rows = []
    for shape in ((64, 768), (64, 3072), (768, 3072)):
        x = torch.randn(shape)
        mod = torch.nn.Identity()
        times: dict[bool, float] = {}
        for stats in (False, True, False, True):
            start = time.perf_counter()
            for _ in range(20):
                with trace(mod, keep_stats=stats, sample_above=SAMPLE_ABOVE):
                    torch.mul(x, 1.5)
            times[stats] = min(times.get(stats, 1e9), (time.perf_counter() - start) / 20)
        rows.append({"shape": list(shape), "numel": x.numel(), "us_per_output": (times[True] - times[False]) * 1e6})
    return rows


def _in_child(variant: str, size: GPT2, dtype: str) -> dict:
    args = [sys.executable, "-m", "mpviz.cli.realsize", "--child", variant, *size.args(), "--dtype", dtype]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode:
        return {"variant": variant, "failed": proc.stderr.strip()[-400:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_realsize(
    rounds: int = 2,
    small: GPT2 = SMALL,
    medium: GPT2 | None = MEDIUM,
    dtype: str = "bf16",
    echo: Callable[[str], None] | None = None,
) -> dict:
    """Every figure above: {"small": [rows, rounds × VARIANTS], "medium": [untraced, stream] | None, "stats": rows};
    `echo(line)` hears each row as it comes (a run takes minutes)."""
    echo = echo or (lambda _line: None)
    result: dict = {"small_size": asdict(small), "small": [], "medium": None, "stats": stats_cost()}
    for row in result["stats"]:
        echo(f"statistics {row['shape']!s:>12} {row['numel']:>10,} elements: {row['us_per_output']:7.0f} us per output")
    echo(f"{small}, CPU autocast {dtype}")
    for r in range(rounds):
        for variant in VARIANTS:
            row = _in_child(variant, small, dtype) | {"round": r}
            result["small"].append(row)
            echo(_line(row))
    if medium is not None:
        echo(f"{medium}, CPU autocast {dtype}, streamed (byte cap lowered to {STREAM_AT_BYTES:,} B to stream it)")
        result["medium_size"] = asdict(medium)
        result["medium"] = [_in_child(variant, medium, dtype) for variant in ("untraced", "stream")]
        for row in result["medium"]:
            echo(_line(row))
    return result


def _line(row: dict) -> str:
    if "failed" in row:
        return f"{row['variant']:>13}: failed: {row['failed']}"
    text = f"{row['variant']:>13}: {row['seconds']:6.2f} s, peak {row['peak_mb']:6.0f} MB"
    text += f" (model built: {row['built_mb']:5.0f} MB)"
    if "ops" in row:
        text += f", {row['ops']:,} ops, payload {row['payload_bytes']:,} B"
    if "kept_bytes" in row:
        text += (
            f"; kernel keeps {row['kept_bytes']:,} B of events in chunks (RSS after {row['rss_after_mb']:.0f} MB),"
            f" one chunk ({row['chunk_bytes']:,} B at most) answered in {row['fetch_ms'] * 1e3:.0f} us (median)"
        )
    return text


def main(argv: list[str] | None = None) -> None:
    """The child's entry point, and a stand-alone run (tests/bench/realsize.py)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=SMALL.layers)
    p.add_argument("--d", type=int, default=SMALL.d)
    p.add_argument("--heads", type=int, default=SMALL.heads)
    p.add_argument("--tokens", type=int, default=SMALL.tokens)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--dtype", default="bf16", choices=("bf16", "off"))
    p.add_argument("--no-medium", action="store_true", help="skip the streamed GPT-2-medium step")
    p.add_argument("--child")
    a = p.parse_args(argv)
    size = GPT2(a.layers, a.d, a.heads, a.tokens)
    if a.child:
        print(json.dumps(child(a.child, size, a.dtype)))
        return
    run_realsize(a.rounds, size, None if a.no_medium else MEDIUM, a.dtype, echo=lambda line: print(line, flush=True))


if __name__ == "__main__":
    main()
