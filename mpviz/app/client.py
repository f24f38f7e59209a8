"""Who a session's browser is, for the per-client bounds: rooms opened and wrong room codes tried (mpviz/app/follow.py),
and the heavy lane's one place per client (mpviz/app/serving/results.py). One answer for both, so a bound cannot be
dodged by looking like two clients to one rule and one client to the other."""

from __future__ import annotations

import ipaddress

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

__all__ = ["client_id"]

_SESSION_KEY = "_client"  # a session's connection does not change: its headers are read once, not per poll


def _read() -> str | None:
    try:
        ip = st.context.ip_address
        forwarded = list(st.context.headers.get_all("X-Forwarded-For"))
        private = ip is None or ipaddress.ip_address(ip.split("%")[0]).is_private
    except Exception:  # no browser connection (a page test's stand-in context): no client to tell apart
        return None
    if not private:
        return ip  # straight from the internet: a header it sent proves nothing
    hops = [h.strip() for line in forwarded if isinstance(line, str) for h in line.split(",") if h.strip()]
    return hops[-1] if hops else ip


def client_id() -> str | None:
    """The address the connection came from; when it came through a proxy on this machine or a private network
    (deploy/nginx.conf.template, an Ingress, a Space's front), the address that proxy saw: the last X-Forwarded-For
    entry, the one a client cannot write. None for this machine itself with no proxy (a teacher's laptop, the
    tests): it is not bounded. A server exposed directly on a private network trusts that network's header."""
    if get_script_run_ctx() is None:  # outside a page run: no session to remember it in
        return _read()
    if _SESSION_KEY in st.session_state:
        return st.session_state[_SESSION_KEY]
    client = st.session_state[_SESSION_KEY] = _read()
    return client
