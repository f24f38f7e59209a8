"""On a machine with a GPU: what the attention lesson tells at each step on real `cuda`, next to `cuda-sim`.

For fp16 and bf16 the lesson bundle is built for both devices and each story step's notice kinds are printed side
by side, with the step's output dtypes and whether autocast's cast was flagged; the bundle sizes too. Checks what
the emulation's own conversions must not claim (an fp32_set_opt_dtype op gets no autocast cast on either).

    python tests/bench/cuda_story.py $OUT/story.json
"""

import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mpviz.bundle import lesson_bundle
from mpviz.model import AttentionConfig


def story(device: str, dtype: str) -> tuple[list[dict], int, float]:
    start = time.perf_counter()
    data = lesson_bundle(AttentionConfig(), device, dtype).data
    seconds = time.perf_counter() - start
    events = data["events"]
    rows = []
    for step in data["story"]:
        e = events[step["event"]]
        rows.append(
            {
                "landmarks": step["landmarks"],
                "op": e["op"],
                "dtypes": [o["dtype"] for o in e["out"]],
                "casts": len(step["casts"]),
                "notices": [n["kind"] for n in step["notices"]],
            }
        )
    return rows, len(json.dumps(data)), seconds


def main() -> None:
    assert torch.cuda.is_available(), "needs a GPU"
    out = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "runs": {}}
    for dtype in ("fp16", "bf16"):
        real, real_bytes, real_s = story("cuda", dtype)
        sim, sim_bytes, sim_s = story("cuda-sim", dtype)
        out["runs"][dtype] = {"cuda": real, "cuda-sim": sim, "bytes": [real_bytes, sim_bytes], "s": [real_s, sim_s]}
        print(f"{dtype}: cuda {len(real)} steps {real_bytes} B {real_s:.2f} s; sim {len(sim)} steps {sim_bytes} B")
        theirs = {tuple(b["landmarks"]): b for b in sim}  # backward's parameter gradients come in either order
        for a in real:
            b = theirs.get(tuple(a["landmarks"]))
            same = b is not None and (a["notices"], a["dtypes"], a["casts"]) == (b["notices"], b["dtypes"], b["casts"])
            print(f" {'  ' if same else '!!'} {','.join(a['landmarks']):24} {a['op']:32} {a['dtypes']} {a['notices']}")
            if not same and b is not None:
                print(f"    cuda-sim {' ' * 16} {b['op']:32} {b['dtypes']} casts {b['casts']} {b['notices']}")
    Path(sys.argv[1] if len(sys.argv) > 1 else "cuda_story.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
