"""The security headers, hidden paths and Host/Origin checks of a public host, as ASGI middleware (serve.py).

Streamlit 1.67 has no option for response headers: a plain `streamlit run app.py` sends no Content-Security-Policy,
no X-Content-Type-Options and no frame-ancestors, so any site may frame it. Its `st.App` (an ASGI app that
`streamlit run` finds in the script it is given: serve.py) takes Starlette middleware, and `SecurityHeaders` is
that middleware. It runs before Streamlit's own on every request, the websocket too, and:

- adds to every HTTP response the headers of deploy/nginx.conf.template (`HEADERS`; a test compares the two): the
  CSP, `X-Content-Type-Options: nosniff`, `X-Frame-Options`, `Referrer-Policy: no-referrer`, `Permissions-Policy`;
  and `Strict-Transport-Security` when the request arrived over TLS (its own scheme, or `X-Forwarded-Proto: https`
  from the TLS front of a container, a Space or an Ingress);
- answers 404 for `/_stcore/metrics` (active sessions, cache sizes: nothing a visitor needs);
- refuses (403) a websocket whose `Origin` is not the host it was opened on: Streamlit's own check also accepts
  `http://localhost` and `http://0.0.0.0` origins on any host;
- refuses (400) any request whose `Host` is not in `server.allowedHosts`, where that list is set (Streamlit checks
  it for the websocket only): a DNS-rebound name cannot fetch the pages either.

$MPVIZ_FRAME_ANCESTORS (default `'self'`) is the CSP's frame-ancestors: a Hugging Face Space shows the app inside
a frame of huggingface.co, so a Space sets it to `'self' https://huggingface.co` (then no X-Frame-Options is sent:
it cannot name another origin).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from streamlit import config

__all__ = ["HEADERS", "SecurityHeaders", "headers_for"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGI = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

# What Streamlit 1.67 needs, checked in Chromium on every page (tests/test_cluster.py): its own scripts plus one
# inline script (index.html's `window.prerenderReady`, allowed by its sha256, which tests/test_deploy.py recomputes
# from the installed Streamlit); 'wasm-unsafe-eval' for the protobuf decoder's WebAssembly i64 helper (not JS
# eval); blob: for st.components.v2 (an inline js= is imported from a blob URL); inline styles (emotion, st.html);
# data:/blob: images and fonts; same-origin fetch and websocket. No other origin. {ancestors}: see the module doc.
CSP = (
    "default-src 'self'; script-src 'self' 'sha256-THxz9J9+wf7rhwR2YkXJoSZ13UCmYyC+3lNDv2+8ugA=' 'wasm-unsafe-eval' "
    "blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "worker-src 'self' blob:; frame-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors {ancestors}"
)
HEADERS = {
    "Content-Security-Policy": CSP.format(ancestors="'self'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # a shared link's query (the view, a room code) stays here
    "X-Frame-Options": "SAMEORIGIN",  # frame-ancestors for browsers that predate CSP 2
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
HSTS = "max-age=31536000"  # a year; no includeSubDomains: the app does not speak for its parent domain's hosts
HIDDEN = frozenset({"/_stcore/metrics"})


def headers_for(ancestors: str) -> dict[str, str]:
    """HEADERS with the CSP's frame-ancestors set to `ancestors` (X-Frame-Options only for `'self'`)."""
    if ancestors == "'self'":
        return dict(HEADERS)
    chosen = {**HEADERS, "Content-Security-Policy": CSP.format(ancestors=ancestors)}
    del chosen["X-Frame-Options"]
    return chosen


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _host_allowed(host: str | None) -> bool:
    """`host` (a Host header, port ignored) against `server.allowedHosts` ('*', `*.example.org`); an empty list
    allows every host, as Streamlit does."""
    allowed = [h.strip().lower().rstrip(".") for h in config.get_option("server.allowedHosts") or () if h.strip()]
    if not allowed or "*" in allowed:
        return True
    try:
        name = (urlsplit(f"//{host}").hostname or "") if host else ""
    except ValueError:
        return False
    name = name.rstrip(".")
    return any(name == h or (h.startswith("*.") and name.endswith(h[1:])) for h in allowed)


def _same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a websocket's Origin names the host it was opened on (host and port; no Origin: not a browser)."""
    if origin is None:
        return True
    try:
        return host is not None and urlsplit(origin).netloc.lower() == host.lower()
    except ValueError:
        return False


class SecurityHeaders:
    """ASGI middleware: the module doc's headers, hidden paths, Origin and Host checks around `app`."""

    def __init__(self, app: ASGI, ancestors: str | None = None) -> None:
        self.app = app
        ancestors = ancestors or os.environ.get("MPVIZ_FRAME_ANCESTORS", "").strip() or "'self'"
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers_for(ancestors).items()]

    async def __call__(self, scope: Scope, receive, send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        host = _header(scope, b"host")
        refuse = None
        if not _host_allowed(host):
            refuse = 400
        elif scope.get("path") in HIDDEN:
            refuse = 404
        elif kind == "websocket" and not _same_origin(_header(scope, b"origin"), host):
            refuse = 403
        if refuse is not None:
            return await self._refuse(kind, refuse, send)
        if kind == "websocket":
            return await self.app(scope, receive, send)
        tls = scope.get("scheme") == "https" or _header(scope, b"x-forwarded-proto") == "https"
        extra = self.headers + ([(b"strict-transport-security", HSTS.encode())] if tls else [])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", ())}
                message["headers"] = [*message.get("headers", ()), *((k, v) for k, v in extra if k not in present)]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _refuse(self, kind: str, status: int, send) -> None:
        if kind == "websocket":  # before accepting: the handshake is answered with a 403
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "http.response.start", "status": status, "headers": [*self.headers]})
        await send({"type": "http.response.body", "body": b""})
