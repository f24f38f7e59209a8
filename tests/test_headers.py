"""Security headers on every hosting path (see deploy/README.md, "Headers"): what mpviz.app.serving.security_headers
adds and refuses, checked on a small Starlette app, and on a real `streamlit run serve.py` (the container's command).

The proxy's copy (deploy/nginx.conf.template) is compared with the same HEADERS in tests/test_deploy.py and runs
for real in tests/test_cluster.py; the Ingress and the container are parsed there too.
"""

import http.client
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from streamlit.testing.v1.util import patch_config_options

from mpviz.app.serving.security_headers import HEADERS, HSTS, SecurityHeaders
from tests.servers import free_port, stop, wait_until_answering

ROOT = Path(__file__).resolve().parents[1]
_ARGS = ("--server.address", "127.0.0.1", "--server.headless", "true")


async def _page(request):
    return PlainTextResponse("page")


async def _stream(websocket):
    await websocket.accept()
    await websocket.send_text("hello")
    await websocket.close()


def _client(ancestors: str | None = None) -> TestClient:
    app = Starlette(
        routes=[Route("/", _page), Route("/_stcore/metrics", _page), WebSocketRoute("/_stcore/stream", _stream)],
        middleware=[Middleware(SecurityHeaders, ancestors=ancestors)],
    )
    return TestClient(app, base_url="http://mpviz.example.org")


@pytest.fixture(autouse=True)
def _app_host():
    """The small app answers as mpviz.example.org, a host the config allows (tests that need others say so)."""
    with patch_config_options({"server.allowedHosts": ["mpviz.example.org"]}):
        yield


def test_every_response_carries_the_headers_and_hsts_only_under_tls():
    plain = _client().get("/")
    assert plain.status_code == 200
    for name, value in HEADERS.items():
        assert plain.headers[name] == value, name
    assert "strict-transport-security" not in plain.headers
    assert _client().get("/", headers={"X-Forwarded-Proto": "https"}).headers["strict-transport-security"] == HSTS
    secure = TestClient(_client().app, base_url="https://mpviz.example.org").get("/")
    assert secure.headers["strict-transport-security"] == HSTS


def test_a_space_may_be_framed_by_huggingface_and_by_nobody_else():
    framed = _client("'self' https://huggingface.co").get("/")
    assert framed.headers["content-security-policy"].endswith("frame-ancestors 'self' https://huggingface.co")
    assert "x-frame-options" not in framed.headers  # it cannot name another origin; the CSP does


def test_metrics_are_hidden():
    assert _client().get("/_stcore/metrics").status_code == 404


@pytest.mark.parametrize(
    "origin", ["http://localhost", "http://localhost:8501", "http://0.0.0.0:8501", "https://evil.example"]
)
def test_a_websocket_from_another_origin_is_refused(origin):
    headers = {"Origin": origin, "Host": "mpviz.example.org"}  # an allowed host: only the Origin is wrong
    with pytest.raises(WebSocketDisconnect), _client().websocket_connect("/_stcore/stream", headers=headers):
        pass


def test_a_websocket_from_the_app_s_own_origin_connects():
    own = {"Origin": "http://mpviz.example.org", "Host": "mpviz.example.org"}  # TestClient's websocket says testserver
    with _client().websocket_connect("/_stcore/stream", headers=own) as ws:
        assert ws.receive_text() == "hello"


def test_a_host_outside_allowed_hosts_gets_nothing():
    with patch_config_options({"server.allowedHosts": ["mpviz.example.org", "*.hf.space"]}):
        assert _client().get("/").status_code == 200
        assert _client().get("/", headers={"Host": "x.hf.space"}).status_code == 200
        assert _client().get("/", headers={"Host": "rebound.example"}).status_code == 400
    with patch_config_options({"server.allowedHosts": []}):  # Streamlit's default: every host
        assert _client().get("/", headers={"Host": "rebound.example"}).status_code == 200


@pytest.mark.slow
@pytest.mark.xdist_group("serial")
def test_streamlit_run_serve_py_sends_the_headers_and_refuses_what_the_middleware_refuses(tmp_path):
    """The container's command, for real: page, static file and health all carry the headers; metrics are hidden;
    a websocket from a localhost origin (which Streamlit alone accepts) is refused; another Host gets nothing."""
    port, log_path = free_port(), tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "mpviz/app/serve.py", *_ARGS, "--server.port", str(port)],
            cwd=ROOT,
            env={**os.environ, "MPVIZ_WARM_UP": "0"},  # the headers are the test, not the warm-up (tests/test_load.py)
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(
            proc, f"{url}/_stcore/health", log_path, "mpviz/app/serve.py", ok=lambda body: body == b"ok"
        )
        page = urllib.request.urlopen(url, timeout=30)
        script = next(p for p in page.read().decode().split('"') if p.startswith("./static/") and p.endswith(".js"))
        for response in (page, urllib.request.urlopen(f"{url}/{script[2:]}", timeout=30)):
            for name, value in HEADERS.items():
                assert response.headers[name] == value, (response.url, name)
        statuses = {}
        for name, path, headers in [
            ("metrics", "/_stcore/metrics", {}),
            ("rebound", "/", {"Host": "rebound.example"}),
            ("localhost origin", "/_stcore/stream", {"Origin": f"http://localhost:{port}", **_UPGRADE}),
            ("own origin", "/_stcore/stream", {"Origin": url, **_UPGRADE}),
        ]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", path, headers=headers)
            statuses[name] = conn.getresponse().status
            conn.close()
        assert statuses == {"metrics": 404, "rebound": 400, "localhost origin": 403, "own origin": 101}
    finally:
        stop(proc)


_UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}
