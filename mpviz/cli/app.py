"""`app`: start the Streamlit app from the installed package (mpviz/app/serve.py: the app behind the headers a
public host needs), with the package's Streamlit settings (mpviz/app/config.toml, which a checkout's
.streamlit/config.toml links to).

Settings reach Streamlit as its `STREAMLIT_<SECTION>_<KEY>` environment variables, set only where the environment
has none: a value the user exported, or a flag passed after `--`, still wins.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import tomllib
from importlib.resources import files

from mpviz.cli.output import UsageError

CONFIG = files("mpviz.app").joinpath("config.toml")
SERVE = files("mpviz.app").joinpath("serve.py")


def _env_name(section: str, key: str) -> str:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key)  # allowedHosts → allowed_Hosts
    return f"STREAMLIT_{section}_{snake}".upper()


def _env_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def streamlit_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """`environ` (default os.environ) with the package's Streamlit settings added where it has none."""
    env = dict(os.environ if environ is None else environ)
    for section, options in tomllib.loads(CONFIG.read_text(encoding="utf-8")).items():
        for key, value in options.items():
            env.setdefault(_env_name(section, key), _env_value(value))
    return env


def app_command(port: int, address: str | None, extra: list[str]) -> list[str]:
    """The `streamlit run` command line that serves the app on `port` (and `address`, default the config's)."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(SERVE), f"--server.port={port}"]
    if address is not None:
        cmd.append(f"--server.address={address}")
    return [*cmd, *extra]


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
