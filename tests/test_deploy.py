"""Hosting files, checked without starting anything: the public-host config, the container, the proxy, Kubernetes.

No Docker daemon runs here, so the Dockerfile is parsed, not built; the manifest is parsed with PyYAML. The proxy
itself runs for real in tests/test_cluster.py.
"""

import base64
import hashlib
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import streamlit
import yaml
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.util import patch_config_options

from mpviz.app.serving.security_headers import HEADERS

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
STREAMLIT_INDEX = Path(streamlit.__file__).parent / "static" / "index.html"
HEALTH = "/_stcore/health"
PORT = 8501


# --- .streamlit/config.toml ----------------------------------------------------------------------------------


def _config() -> dict:
    return tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())


def test_config_is_safe_for_a_public_host():
    server, client = _config()["server"], _config()["client"]
    assert client["showErrorDetails"] == "none"  # no type, message or traceback for visitors
    assert client["showErrorLinks"] is False
    assert client["toolbarMode"] == "viewer"
    assert server["fileWatcherType"] == "none"
    assert server["enableStaticServing"] is False
    assert server["enableXsrfProtection"] is True
    assert server["enableCORS"] is True
    assert server["address"] in {"localhost", "127.0.0.1"}  # local runs: loopback only; containers override it
    assert server["headless"] is True
    assert 0 < server["maxUploadSize"] <= 5
    assert 0 < server["maxMessageSize"] <= 50
    assert 0 < server["maxWidgetStateSize"] <= 5
    assert 0 < server["disconnectedSessionTTL"] <= 60
    assert set(server["allowedHosts"]) == {"localhost", "127.0.0.1"}  # local runs; each hosted path sets its own
    assert _config()["browser"]["gatherUsageStats"] is False


def test_every_config_key_is_a_streamlit_option_with_an_accepted_value():
    options = st_config.get_config_options()
    for section, values in _config().items():
        for key in values:
            assert f"{section}.{key}" in options, f"{section}.{key} is not a Streamlit {streamlit.__version__} option"
    assert _config()["client"]["showErrorDetails"] in {o.value for o in st_config.ShowErrorDetailsConfigOptions}
    assert _config()["server"]["fileWatcherType"] in {"auto", "watchdog", "poll", "none"}


def test_a_visitor_sees_no_error_details():
    """With the configured value, an uncaught exception reaches the browser as Streamlit's generic box only."""
    script = 'import streamlit as st\nst.title("before")\nraise OverflowError("math range error in /srv/secret.py")'
    with patch_config_options({"client.showErrorDetails": _config()["client"]["showErrorDetails"]}):
        at = AppTest.from_string(script).run()
    (shown,) = at.exception
    assert "redacted" in shown.message and "secret" not in shown.message
    assert shown.proto.type == "" and not shown.proto.stack_trace
    assert at.title[0].value == "before"  # what ran before the error is still on the page


# --- deploy/Dockerfile -------------------------------------------------------------------------------------------


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per Dockerfile instruction, continuation lines joined, comments dropped."""
    joined = re.sub(
        r"\\\n", " ", "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))
    )
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined.splitlines() if line.strip()]


def test_dockerfile_builds_a_cpu_only_non_root_image_with_a_health_check():
    steps = _instructions(DEPLOY / "Dockerfile")
    kinds = [k for k, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim")
    runs = " && ".join(a for k, a in steps if k == "RUN")
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (torch_pin,) = [d.removeprefix("torch==") for d in dependencies if d.startswith("torch==")]
    cpu_torch = f"pip install torch=={torch_pin} --index-url https://download.pytorch.org/whl/cpu"
    assert cpu_torch in runs, "torch must come from the CPU index, at the package's pin"
    assert runs.index(cpu_torch) < runs.index('pip install "/src[app]"'), "the CPU build first, then the package"
    (user,) = [a for k, a in steps if k == "USER"]
    assert user.split(":")[0] not in {"root", "0"}
    assert kinds.index("USER") < kinds.index("CMD")
    assert ("EXPOSE", str(PORT)) in steps
    (health,) = [a for k, a in steps if k == "HEALTHCHECK"]
    assert f"127.0.0.1:{PORT}{HEALTH}" in health
    (cmd,) = [a for k, a in steps if k == "CMD"]
    assert cmd == f'["mpviz", "app", "--address=0.0.0.0", "--port={PORT}"]', "the installed package's app (serve.py)"
    env = " ".join(a for k, a in steps if k == "ENV")
    assert re.search(r'STREAMLIT_SERVER_ALLOWED_HOSTS="[^"*]+"', env), "the container names the hosts it answers to"


def test_dockerignore_keeps_the_app_and_drops_history_and_tests():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    ignored.discard("")
    assert {".git", "tests"} <= ignored
    needed = {"mpviz", "pyproject.toml", "README.md"}  # what `pip install "/src[app]"` builds the package from
    assert not needed & ignored


# --- deploy/nginx.conf.template ----------------------------------------------------------------------------------


def _nginx() -> str:
    return (DEPLOY / "nginx.conf.template").read_text()


def _header(name: str) -> str:
    match = re.search(rf'add_header {name} "([^"]*)" always;', _nginx())
    assert match, f"no `add_header {name} ... always` in the template"
    return match.group(1)


def _location(path: str) -> str:
    match = re.search(rf"location = {re.escape(path)} \{{(.*?)\n        \}}", _nginx(), re.S)
    assert match, f"no exact location {path}"
    return match.group(1)


def test_csp_allows_exactly_the_inline_scripts_of_the_installed_streamlit():
    """Streamlit's index.html has inline scripts; the CSP allows each by hash, so an upgrade that changes one fails
    here instead of breaking the page behind the proxy."""
    assert _header("Content-Security-Policy") == HEADERS["Content-Security-Policy"]  # the proxy's is the app's
    inline = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", STREAMLIT_INDEX.read_text(), re.S)
    wanted = {f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in inline}
    directives = dict(d.strip().split(None, 1) for d in _header("Content-Security-Policy").split(";") if d.strip())
    allowed = set(re.findall(r"'sha256-[^']+'", directives["script-src"]))
    assert allowed == wanted, f"script-src hashes {allowed} != index.html's inline scripts {wanted}"
    assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
    assert directives["default-src"] == "'self'"
    assert directives["frame-ancestors"] == "'self'"
    assert directives["object-src"] == "'none'"
    for directive, sources in directives.items():
        assert "http" not in sources and "*" not in sources, f"{directive} allows another origin: {sources}"


def test_proxy_sets_security_headers_and_the_route_cookie():
    assert _header("X-Content-Type-Options") == "nosniff"
    assert _header("Referrer-Policy") == "no-referrer"
    for name, value in HEADERS.items():  # the same headers as the app sends itself (serve.py)
        assert _header(name) == value, name
    cookie = _header("Set-Cookie")
    assert cookie.startswith("mpviz_route=$route_key;") and cookie.endswith("$mpviz_cookie_secure")
    parts = {p.strip() for p in cookie.removesuffix("$mpviz_cookie_secure").split(";")}
    assert {"Path=/", "HttpOnly", "SameSite=Lax"} <= parts


def _map(variable: str) -> str:
    match = re.search(rf"map [^{{]*\${variable} \{{(.*?)\n    \}}", _nginx(), re.S)
    assert match, f"no map to ${variable}"
    return match.group(1)


def test_proxy_sends_hsts_and_a_secure_cookie_only_under_tls():
    assert "add_header Strict-Transport-Security $mpviz_hsts always;" in _nginx()
    tls = _map("mpviz_tls")
    assert '"~^on:" 1;' in tls and '"~:https$" 1;' in tls and "default 0;" in tls  # its own TLS, or the front's
    assert re.search(r'1 "max-age=\d{7,}";', _map("mpviz_hsts")) and 'default "";' in _map("mpviz_hsts")
    assert '1 "; Secure";' in _map("mpviz_cookie_secure") and 'default "";' in _map("mpviz_cookie_secure")


def test_proxy_hides_metrics_checks_the_websocket_origin_and_answers_only_its_hosts():
    assert "return 404;" in _location("/_stcore/metrics")
    assert re.search(r"if \(\$mpviz_origin_ok = 0\) \{\s*return 403;", _location("/_stcore/stream"))
    origin = re.compile(r"^https?://(?P<h>[^/|]+)[|](?P=h)$", re.I)  # the map's first line, in Python's syntax
    assert '"~*^https?://(?<mpviz_origin_host>[^/|]+)[|]\\k<mpviz_origin_host>$" 1;' in _map("mpviz_origin_ok")
    assert origin.match("http://mpviz.example.org|mpviz.example.org")
    assert not origin.match("http://localhost:8501|mpviz.example.org:8501")
    assert re.search(r"listen @LISTEN@ default_server;\s*server_name _;\s*return 444;", _nginx())
    assert "server_name @SERVER_NAMES@;" in _nginx()


def test_proxy_routes_by_room_code_then_cookie_then_a_fresh_key():
    conf = _nginx()
    assert "hash $route_key consistent;" in conf
    route_map = re.search(r'map "\$mpviz_follow_key:\$mpviz_cookie_key" \$route_key \{(.*?)\}', conf, re.S).group(1)
    values = re.findall(r"\$(\w+);", route_map)
    assert values == ["mpviz_followed", "mpviz_kept", "mpviz_fresh_key"]  # follow, else cookie, else fresh
    assert "map $arg_follow $mpviz_follow_key" in conf and "map $cookie_mpviz_route $mpviz_cookie_key" in conf
    assert re.search(r"server 127\.0\.0\.1|@UPSTREAM_SERVERS@", conf)
    assert "proxy_next_upstream error timeout" in conf  # a dead replica's requests go to a live one


def test_websocket_location_upgrades_and_stays_open():
    stream = _location("/_stcore/stream")
    assert "proxy_set_header Upgrade $http_upgrade;" in stream
    assert "proxy_set_header Connection $connection_upgrade;" in stream
    assert "proxy_set_header Host $http_host;" in stream  # Streamlit's Origin check compares with Host
    assert re.search(r"proxy_read_timeout 1h;", stream) and re.search(r"proxy_send_timeout 1h;", stream)
    assert "proxy_pass http://mpviz;" in _location(HEALTH)


def test_proxy_serves_streamlits_static_files_itself_and_safely():
    static = re.search(r"location /static/ \{(.*?)\n        \}", _nginx(), re.S)
    assert static, "no location /static/"
    assert "alias @STATIC_DIR@/static/;" in static.group(1)  # both slashes: no /static../ traversal via alias
    assert "add_header" not in static.group(1)  # it would drop the server's security headers for these files
    types = re.search(r"types \{(.*?)\}", _nginx(), re.S).group(1)
    assert re.search(r"text/javascript js", types)  # module scripts are refused under any other type


# --- deploy/cluster.sh -------------------------------------------------------------------------------------------


def test_cluster_script_parses_and_refuses_bad_arguments(tmp_path):
    script = DEPLOY / "cluster.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    for args in ([], ["start", "2"], ["start", "x", "8080"], ["stop", "http"], ["restart", "8080"]):
        done = subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2, f"cluster.sh {shlex.join(args)} -> {done.returncode}: {done.stderr}"
    env = {"PATH": "/usr/bin:/bin", "MPVIZ_CLUSTER_DIR": str(tmp_path / "none")}
    done = subprocess.run(["bash", str(script), "stop", "9"], capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode == 0 and "no cluster" in done.stdout  # stopping nothing is not an error


# --- deploy/k8s.yaml ---------------------------------------------------------------------------------------------


def _k8s() -> dict[str, dict]:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s.yaml").read_text()) if d]
    return {d["kind"]: d for d in docs}


def _quantity(q: str) -> float:
    """A Kubernetes quantity as a number (cpu in cores, memory in bytes)."""
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9}
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(q)).groups()
    return float(number) * units.get(unit, 1)


def test_k8s_deployment_probes_resources_secret_and_non_root():
    k8s = _k8s()
    pod = k8s["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    port = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert port == {"http": PORT}
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": HEALTH, "port": "http"}, probe
    res = container["resources"]
    assert 1 <= _quantity(res["requests"]["cpu"]) <= _quantity(res["limits"]["cpu"])
    assert 1.25 * 2**30 <= _quantity(res["requests"]["memory"]) <= _quantity(res["limits"]["memory"]) <= 4 * 2**30
    env = {e["name"]: e for e in container["env"]}
    assert env["STREAMLIT_SERVER_COOKIE_SECRET"]["valueFrom"]["secretKeyRef"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert k8s["Deployment"]["spec"]["replicas"] >= 2


def test_k8s_service_and_ingress_keep_a_session_on_one_replica():
    k8s = _k8s()
    labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    service = k8s["Service"]["spec"]
    assert service["sessionAffinity"] == "ClientIP"
    assert service["selector"].items() <= labels.items()
    assert service["ports"][0]["targetPort"] == "http"
    ingress = k8s["Ingress"]
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-name"]
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[f"nginx.ingress.kubernetes.io/{timeout}"]) >= 3600, timeout
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == k8s["Service"]["metadata"]["name"]


def test_k8s_ingress_is_https_only_and_the_pods_answer_only_its_host():
    k8s = _k8s()
    ingress = k8s["Ingress"]
    notes = ingress["metadata"]["annotations"]
    host = ingress["spec"]["rules"][0]["host"]
    (tls,) = ingress["spec"]["tls"]
    assert tls["hosts"] == [host] and tls["secretName"]
    assert notes["nginx.ingress.kubernetes.io/ssl-redirect"] == notes["nginx.ingress.kubernetes.io/force-ssl-redirect"]
    assert notes["nginx.ingress.kubernetes.io/ssl-redirect"] == "true"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-secure"] == "true"
    (container,) = k8s["Deployment"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["STREAMLIT_SERVER_ALLOWED_HOSTS"].split() == [host]
    # the headers themselves come from the image's serve.py (test_dockerfile_...; tests/test_headers.py)
