"""How the app is started from the installed package: the `streamlit run` command line for mpviz/app/serve.py (the
app behind the headers a public host needs) and the package's Streamlit settings (mpviz/app/config.toml, which a
checkout's .streamlit/config.toml links to) as Streamlit's `STREAMLIT_<SECTION>_<KEY>` environment variables, set
only where the environment has none: a value the user exported, or a flag on the command line, still wins.
`mpviz app` (mpviz/cli/app.py) and the bench's class of 30 (mpviz/app/page_timing.py) start it this way.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from importlib.resources import files

__all__ = ["CONFIG", "SERVE", "app_command", "streamlit_env"]

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
