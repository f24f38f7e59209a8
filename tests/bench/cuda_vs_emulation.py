"""On a machine with a GPU: does `cuda-sim` (CUDA's autocast policy on CPU tensors) show what real CUDA runs?

For each autocast dtype and attention kind, the attention block is traced on `cuda` and on `cuda-sim`, and the two
op sequences are compared event by event (phase, op, output dtypes, autocast's cast flag), with the landmarks'
errors against float64 side by side. The policy probed on the GPU is compared with the one this build's CPU
probe reports for CUDA. Prints a summary and writes JSON to argv[1] (default: cuda_vs_emulation.json).

    python tests/bench/cuda_vs_emulation.py $OUT/cuda.json
"""

import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mpviz import trace_attention
from mpviz.model import AttentionConfig
from mpviz.policy import device_policy


def _row(e) -> tuple:
    return (e.phase, e.module, e.op, tuple(o.dtype for o in e.outputs), bool(e.autocast_cast))


def compare(dtype: str, attention: str) -> dict:
    cfg = AttentionConfig(attention=attention)
    start = time.perf_counter()
    real = trace_attention(cfg, "cuda", dtype)
    real_s = time.perf_counter() - start
    sim = trace_attention(cfg, "cuda-sim", dtype)
    a, b = [_row(e) for e in real.trace.events], [_row(e) for e in sim.trace.events]
    only_real = [r for r in a if r not in b]
    only_sim = [r for r in b if r not in a]
    errors = {
        k: {"cuda": real.reference_error[k].rel, "cuda-sim": sim.reference_error[k].rel}
        for k in real.reference_error
        if k in sim.reference_error
    }
    return {
        "dtype": dtype,
        "attention": attention,
        "events": {"cuda": len(a), "cuda-sim": len(b)},
        "same_sequence": a == b,
        "only_cuda": [list(map(str, r)) for r in only_real],
        "only_cuda_sim": [list(map(str, r)) for r in only_sim],
        "landmark_dtypes_differ": sorted(
            n
            for n, i in real.trace.landmarks.items()
            if n in sim.trace.landmarks
            and _row(real.trace.events[i])[3] != _row(sim.trace.events[sim.trace.landmarks[n]])[3]
        ),
        "rel_error": errors,
        "trace_s_cuda": round(real_s, 3),
    }


def main() -> None:
    assert torch.cuda.is_available(), "needs a GPU"
    out = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "runs": []}
    for dtype in ("fp16", "bf16"):
        for attention in ("manual", "sdpa"):
            r = compare(dtype, attention)
            out["runs"].append(r)
            print(
                f"{dtype} {attention}: events cuda {r['events']['cuda']} sim {r['events']['cuda-sim']}, "
                f"same={r['same_sequence']}, only cuda {len(r['only_cuda'])}, only sim {len(r['only_cuda_sim'])}, "
                f"landmark dtypes differ: {r['landmark_dtypes_differ']}"
            )
            for row in r["only_cuda"][:12]:
                print("   cuda only:", row)
            for row in r["only_cuda_sim"][:12]:
                print("   sim only: ", row)
    policy = device_policy("cuda")
    out["policy_counts"] = policy.counts()
    out["policy_fp32"] = sorted(policy.categories.get("fp32", ()))[:200]
    print("cuda policy (probed on the GPU):", out["policy_counts"])
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "cuda_vs_emulation.json")
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
