"""`app`: start the Streamlit app from the installed package (mpviz.app.launch says how), in this process."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from mpviz.app.launch import app_command, streamlit_env
from mpviz.cli.output import UsageError


# ── app ───────────────────────────────────────────────────────────────────────────────────────────────────
def _add_app(sub) -> None:
    p = sub.add_parser("app", help="start the app in a browser (needs the [app] extra: pip install 'mpviz[app]')")
    p.add_argument("--port", type=int, default=8501, help="the port to serve on (default 8501)")
    p.add_argument("--address", help="the address to listen on (default: localhost; 0.0.0.0 in a container)")
    p.add_argument("streamlit_args", nargs=argparse.REMAINDER, help="after --: more `streamlit run` flags")


def _run_app(args) -> None:
    if importlib.util.find_spec("streamlit") is None:
        raise UsageError("the app needs Streamlit: pip install 'mpviz[app]'")
    if not 0 < args.port < 65536:
        raise UsageError(f"--port must be between 1 and 65535, not {args.port}")
    extra = [a for a in args.streamlit_args if a != "--"]
    cmd = app_command(args.port, args.address, extra)
    sys.stdout.flush()
    os.execve(sys.executable, cmd, streamlit_env())  # the server becomes this process: signals reach it directly


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "app": (_add_app, _run_app),
}
