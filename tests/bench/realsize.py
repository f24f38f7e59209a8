"""Benchmark of `mpviz.show` on your own model at real size: `python -m mpviz bench --realsize` runs it; this script
runs the same (mpviz/cli/realsize.py) with its own sizes.

    python tests/bench/realsize.py [--layers 12] [--d 768] [--heads 12] [--tokens 64] [--rounds 2] [--no-medium]
    python tests/bench/realsize.py --dtype off  # the same step in float32: the tracer's own overhead, no bf16 kernels
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mpviz.cli.realsize import main  # noqa: E402  (the checkout first on the path)

if __name__ == "__main__":
    main()
