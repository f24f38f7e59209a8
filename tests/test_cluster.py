"""The hosted setup for real: `deploy/cluster.sh start 2 PORT` (two `streamlit run app.py` replicas behind Debian's
nginx, all on 127.0.0.1), driven the way browsers drive it.

- A class of 30 opens one link at once through the proxy: each session GETs the page (the proxy answers with its
  route cookie), then opens the websocket `/_stcore/stream` with that cookie and asks for one run, as
  tests/test_load.py does. Every websocket must land on the replica that served its page, no run may fail; p50/p95
  are printed next to the same class against one plain `streamlit run` measured in the same test.
- One replica is then killed (SIGKILL) while it serves a batch: sessions cut off before their run finished reconnect
  through the proxy (health check, new websocket, same cookie) and finish on the live replica; new sessions land
  there too.
- Chromium opens every page through the proxy and sees no Content-Security-Policy violation.

The cluster runs with MPVIZ_CLUSTER_DEBUG=1: nginx names the replica that served each response in `X-Upstream`.
In CI (CI=true) a missing nginx is a failure, never a skip: .ci/run installs it.
"""

import asyncio
import http.client
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake, WebSocketException
from websockets.typing import Subprotocol

from mpviz.app.websocket_session import percentile, rerun_request
from mpviz.app.websocket_session import run as run_sessions
from tests.browser import APP_IDLE, settle
from tests.prerequisites import require_debian_tool
from tests.test_load import LINK

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("serial")]  # see conftest: never beside other servers
ROOT = Path(__file__).resolve().parents[1]
CLUSTER_SH = ROOT / "deploy" / "cluster.sh"
NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
REPLICAS = 2
CLASS_SIZE = 30
KILL_BATCH = 4  # sessions per replica in flight when one replica is killed
AFTER_KILL = 6  # fresh sessions once a replica is dead
PHASE_TIMEOUT_S = 150  # any one phase (a class, the kill batch); the whole test stays well under this x3
MAX_CONNECTS = 3  # per session: the first websocket and up to two reconnects, as a browser retries
MAX_MESSAGES_PER_RUN = 5000
MAX_MESSAGE_BYTES = 64 * 2**20
SUCCESS = ForwardMsg.ScriptFinishedStatus.Name(ForwardMsg.FINISHED_SUCCESSFULLY)


def _require_nginx() -> str:
    return require_debian_tool(NGINX, "nginx")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies, dead but not yet reaped, do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, pgrp = stat.read_text().rpartition(")")[2].split()[:3]
        except OSError:  # the process ended while we looked
            continue
        if int(pgrp) == pgid and state != "Z":
            return True
    return False


@dataclass(frozen=True)
class Replica:
    name: str
    addr: str  # "127.0.0.1:PORT", as nginx names it in X-Upstream
    pid: int  # leads its own process group
    log: Path


@dataclass(frozen=True)
class Cluster:
    url: str
    run_dir: Path
    replicas: tuple[Replica, ...]
    nginx_pid: int

    def replica(self, addr: str) -> Replica:
        return next(r for r in self.replicas if r.addr == addr)

    def logs(self, lines: int = 15) -> str:
        tails = []
        for path in sorted(self.run_dir.glob("*.log")):
            tails.append(f"--- {path.name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(tails)


@contextmanager
def _running(n: int) -> Iterator[Cluster]:
    """`deploy/cluster.sh start N PORT` in a fresh run directory; stopped (and checked gone) on the way out.

    The run directory is not under pytest's tmp_path: a pytest run started meanwhile on the same machine prunes
    older numbered tmp directories, and nginx serves Streamlit's static files from this one."""
    _require_nginx()
    port = _free_port()
    run_dir = Path(tempfile.mkdtemp(prefix=f"mpviz-cluster-{port}-"))
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "MPVIZ_CLUSTER_DIR": str(run_dir),
        "MPVIZ_CLUSTER_DEBUG": "1",
        "PATH": f"{os.environ.get('PATH', '')}:{Path(NGINX or 'nginx').parent}",
    }
    command = ["bash", str(CLUSTER_SH)]
    pids: list[int] = []
    try:
        started = subprocess.run(
            [*command, "start", str(n), str(port)], env=env, capture_output=True, text=True, timeout=240
        )
        print(started.stdout, started.stderr)
        pids = [int(p.read_text()) for p in sorted(run_dir.glob("*.pid")) if p.name != "nginx.pid"]
        if started.returncode != 0:
            pytest.fail(f"cluster.sh start failed ({started.returncode}):\n{started.stderr}")
        nginx_pid = int((run_dir / "nginx.pid").read_text())
        pids.append(nginx_pid)
        replicas = tuple(
            Replica(
                name=f"replica-{i}",
                addr=f"127.0.0.1:{(run_dir / f'replica-{i}.port').read_text().strip()}",
                pid=int((run_dir / f"replica-{i}.pid").read_text()),
                log=run_dir / f"replica-{i}.log",
            )
            for i in range(n)
        )
        for r in replicas:  # the script says where each replica logs
            assert f"{r.name}: {r.addr} pid {r.pid} log {r.log}" in started.stdout
        yield Cluster(f"http://127.0.0.1:{port}", run_dir, replicas, nginx_pid)
    finally:
        stopped = subprocess.run([*command, "stop", str(port)], env=env, capture_output=True, text=True, timeout=120)
        print(stopped.stdout, stopped.stderr)
        leftovers = [pid for pid in pids if _group_alive(pid)]
        for pid in leftovers:
            os.killpg(pid, signal.SIGKILL)
        shutil.rmtree(run_dir, ignore_errors=True)
        assert stopped.returncode == 0, stopped.stderr
        assert not leftovers, f"cluster.sh stop left process groups {leftovers} running"


@pytest.fixture
def cluster():
    """Two replicas behind nginx, for this test only."""
    with _running(REPLICAS) as c:
        yield c


# --- one browser session, as the proxy sees it ------------------------------------------------------------------


@dataclass
class Visit:
    """One browser opening the link: the page, then the websocket (reconnected if its replica dies)."""

    cookie: str = ""  # mpviz_route the browser had before (a returning browser) or got with the page
    page_tried: str = ""  # X-Upstream of GET /: the replicas nginx tried, the last one served ("" without a proxy)
    sockets_tried: list[str] = field(default_factory=list)  # the same for each websocket opened
    interruptions: list[str] = field(default_factory=list)  # why a websocket ended before the run did
    statuses: list[str] = field(default_factory=list)  # every script_finished, in order
    exceptions: list[str] = field(default_factory=list)
    latency_s: float = math.nan  # first rerun request → final script_finished, reconnects included
    messages: int = 0

    @property
    def ok(self) -> bool:
        return self.statuses[-1:] == [SUCCESS] and not self.exceptions

    @property
    def page_upstream(self) -> str:
        return _served(self.page_tried)

    @property
    def socket_upstreams(self) -> list[str]:
        return [_served(t) for t in self.sockets_tried]

    @property
    def served_by(self) -> str:
        return _served(self.sockets_tried[-1]) if self.sockets_tried else ""

    def tried(self, addr: str) -> bool:
        """Whether the proxy sent any request of this session to `addr` (served or refused)."""
        return any(addr in t for t in (self.page_tried, *self.sockets_tried))


def _served(upstream_header: str) -> str:
    """The replica that answered: nginx lists every upstream it tried ("a:1, b:2"); the last one served."""
    return upstream_header.split(",")[-1].strip()


def _get(url: str, cookie: str) -> tuple[int, dict[str, list[str]]]:
    request = urllib.request.Request(url, headers={"Cookie": f"mpviz_route={cookie}"} if cookie else {})
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
        headers: dict[str, list[str]] = {}
        for k, v in response.headers.items():
            headers.setdefault(k.lower(), []).append(v)
        return response.status, headers


def _route_cookie(headers: dict[str, list[str]]) -> str:
    for value in headers.get("set-cookie", []):
        name, _, rest = value.partition("=")
        if name.strip() == "mpviz_route":
            return rest.split(";")[0]
    return ""


async def _wait_healthy(base_url: str, cookie: str) -> None:
    """What the frontend does before it reconnects: poll /_stcore/health (through the proxy, with its cookie)."""
    for _ in range(50):
        try:
            status, _ = await asyncio.to_thread(_get, f"{base_url}/_stcore/health", cookie)
            if status == 200:
                return
        except OSError:
            pass
        await asyncio.sleep(0.2)


async def _page(base_url: str, query: str, cookie: str) -> tuple[int, dict[str, list[str]]]:
    """GET the page. A response cut off because its replica died mid-body (nginx had already sent the headers, so it
    cannot try the other one) is fetched again once the proxy answers, as a reader reloads a half-loaded page."""
    for _ in range(MAX_CONNECTS - 1):
        try:
            return await asyncio.to_thread(_get, f"{base_url}/?{query}", cookie)
        except http.client.IncompleteRead:
            await _wait_healthy(base_url, cookie)
    return await asyncio.to_thread(_get, f"{base_url}/?{query}", cookie)


async def _visit(base_url: str, query: str, cookie: str = "", on_request=None) -> Visit:
    visit = Visit(cookie=cookie)
    status, headers = await _page(base_url, query, cookie)
    assert status == 200
    visit.cookie = _route_cookie(headers) or cookie
    visit.page_tried = headers.get("x-upstream", [""])[0]
    ws_url = base_url.replace("http://", "ws://") + "/_stcore/stream"
    started = time.perf_counter()
    for _ in range(MAX_CONNECTS):
        try:
            async with connect(
                ws_url,
                subprotocols=[Subprotocol("streamlit")],
                additional_headers={"Cookie": f"mpviz_route={visit.cookie}"} if visit.cookie else {},
                max_size=MAX_MESSAGE_BYTES,
                compression=None,
                open_timeout=30,
                ping_interval=None,
            ) as ws:
                visit.sockets_tried.append(ws.response.headers.get("X-Upstream", ""))
                await ws.send(rerun_request(base_url, query))
                if on_request is not None:
                    on_request(visit)
                for _ in range(MAX_MESSAGES_PER_RUN):
                    msg = ForwardMsg()
                    msg.ParseFromString(await ws.recv(decode=False))
                    visit.messages += 1
                    kind = msg.WhichOneof("type")
                    if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                        element = msg.delta.new_element
                        if element.WhichOneof("type") == "exception":
                            visit.exceptions.append(f"{element.exception.type}: {element.exception.message}")
                    elif kind == "script_finished":
                        visit.statuses.append(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))
                        if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                            visit.latency_s = time.perf_counter() - started
                            return visit
                visit.interruptions.append(f"no final script_finished within {MAX_MESSAGES_PER_RUN} messages")
                return visit
        except (WebSocketException, InvalidHandshake, OSError) as e:  # the replica went away: reconnect
            visit.interruptions.append(type(e).__name__)
            await _wait_healthy(base_url, visit.cookie)
    return visit


async def _class(base_url: str, n: int, cookies: list[str] | None = None, on_request=None) -> list[Visit]:
    cookies = cookies or [""] * n
    visits = (_visit(base_url, LINK, cookie, on_request) for cookie in cookies)
    return list(await asyncio.wait_for(asyncio.gather(*visits), PHASE_TIMEOUT_S))


def _summary(visits: list[Visit]) -> str:
    latencies = [v.latency_s for v in visits if v.ok]
    failed = sum(not v.ok for v in visits)
    if not latencies:
        return f"no run finished; failed runs: {failed}"
    return (
        f"p50 {percentile(latencies, 50):5.2f} s, p95 {percentile(latencies, 95):5.2f} s, "
        f"max {max(latencies):5.2f} s; failed runs: {failed}"
    )


def _keys_per_replica(cluster: Cluster, per_replica: int) -> dict[str, list[str]]:
    """Route keys that nginx hashes to each replica, found by asking it (a bounded number of health requests)."""
    found: dict[str, list[str]] = {r.addr: [] for r in cluster.replicas}
    for i in range(64 * per_replica):
        key = f"c1a55{i:03x}"
        _, headers = _get(f"{cluster.url}/_stcore/health", key)
        keys = found[_served(headers["x-upstream"][0])]
        if len(keys) < per_replica:
            keys.append(key)
        if all(len(k) == per_replica for k in found.values()):
            return found
    pytest.fail(f"could not find {per_replica} route keys per replica: {found}")


# --- the tests -------------------------------------------------------------------------------------------------


def _cpu_s(pid: int) -> float:
    """CPU seconds a process and its reaped children have used (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


@dataclass
class Wave:
    """A class's sessions, with what they cost the servers: wall time is shared with anything else on the machine,
    CPU seconds per replica are not (they bound the wait: one replica runs its sessions' scripts under one GIL)."""

    visits: list[Visit]
    cpu_s: dict[str, float]  # replica name -> CPU seconds used during the wave
    load_before: float  # the machine's 1-minute load average when the wave started

    def line(self) -> str:
        cpu = ", ".join(f"{name} {s:.1f}" for name, s in self.cpu_s.items())
        return f"{_summary(self.visits)}; server CPU s: {cpu}; load avg before {self.load_before:.1f}"


def _warm(cluster: Cluster) -> None:
    """What the teacher's own first visit does on every replica: compute and cache the lesson (and the policy)."""
    keys = _keys_per_replica(cluster, 1)
    run_sessions(_class(cluster.url, len(keys), [k for ks in keys.values() for k in ks]))


def _wave(cluster: Cluster, n: int) -> Wave:
    _warm(cluster)
    load, before = os.getloadavg()[0], {r.name: _cpu_s(r.pid) for r in cluster.replicas}
    visits = run_sessions(_class(cluster.url, n))
    cpu = {r.name: _cpu_s(r.pid) - before[r.name] for r in cluster.replicas}
    return Wave(visits, cpu, load)


def test_a_class_through_two_replicas_and_a_replica_dying(printout):
    began = time.perf_counter()
    with _running(1) as one:  # the same class, the same way, against a single process first
        single = _wave(one, CLASS_SIZE)
    with _running(REPLICAS) as cluster:
        _class_then_kill(cluster, single, began, printout)


def _class_then_kill(cluster: Cluster, single_wave: Wave, began: float, printout: Callable[[str], None]) -> None:
    wave = _wave(cluster, CLASS_SIZE)
    single, proxied = single_wave.visits, wave.visits
    per_replica = Counter(v.served_by for v in proxied)
    lines = [
        f"cluster: a class of {CLASS_SIZE} fresh sessions opens ?{LINK} at once, each replica warmed by one "
        f"visit first ({os.cpu_count()} cores)",
        f"  1 replica behind nginx      : {single_wave.line()}",
        f"  {REPLICAS} replicas behind nginx     : {wave.line()}",
        "  sessions per replica        : "
        + ", ".join(f"{cluster.replica(a).name} {n}" for a, n in sorted(per_replica.items()) if a),
    ]
    printout("\n".join(lines))
    logs = cluster.logs()
    for v in single:
        assert v.ok, f"single process: {v}"
        assert len(v.cookie) == 8 and v.socket_upstreams == [v.page_upstream], v
    for v in proxied:
        assert v.ok, f"through the proxy: {v}\n{logs}"
        assert len(v.cookie) == 8 and v.page_upstream, v  # GET / set a fresh route cookie
        assert v.socket_upstreams == [v.page_upstream], f"websocket left its page's replica: {v}"
    assert set(per_replica) == {r.addr for r in cluster.replicas}, f"sessions were not spread: {per_replica}"

    # --- kill one replica while a batch runs on both ---
    victim, survivor = cluster.replicas
    keys = _keys_per_replica(cluster, KILL_BATCH)
    killed_at: list[float] = []

    # Killed as soon as a session has asked the victim for its run: a run there costs a few ms and runs take turns,
    # so by the time a session read its first message, the victim could already have finished every run it had.
    def kill_on_first_request(visit: Visit) -> None:
        if not killed_at and visit.served_by == victim.addr:
            os.kill(victim.pid, signal.SIGKILL)
            killed_at.append(time.perf_counter())

    batch = run_sessions(
        _class(cluster.url, 2 * KILL_BATCH, keys[victim.addr] + keys[survivor.addr], kill_on_first_request)
    )
    after = run_sessions(_class(cluster.url, AFTER_KILL))
    on_victim = [v for v in batch if v.tried(victim.addr)]
    cut_off = [v for v in on_victim if v.interruptions]
    failed_over = [v for v in on_victim if not v.interruptions and v.served_by == survivor.addr]
    lines = [
        f"  {victim.name} ({victim.addr}, pid {victim.pid}) killed with SIGKILL while {len(on_victim)} of "
        f"{len(batch)} sessions were routed to it:",
        f"    {len(cut_off)} cut off before their run finished reconnected (health check, new websocket, same "
        f"cookie) and finished on {survivor.name}: {_summary(cut_off)}",
        f"    {len(failed_over)} routed to it after its death were passed to {survivor.name} by nginx; "
        f"{len(on_victim) - len(cut_off) - len(failed_over)} finished on {victim.name} before it died; "
        f"{len(batch) - len(on_victim)} on {survivor.name} unaffected; whole batch: {_summary(batch)}",
        f"  {AFTER_KILL} new sessions after the kill: "
        + ", ".join(sorted({cluster.replica(v.served_by).name for v in after if v.served_by}))
        + f"; {_summary(after)}",
        f"  whole test {time.perf_counter() - began:.1f} s",
    ]
    printout("\n".join(lines))
    logs = cluster.logs()
    assert killed_at, f"no session asked {victim.name} for a run: {batch}"
    assert cut_off, "the kill reached no session before its run finished"
    for v in batch:
        assert v.ok, f"{v}\n{logs}"
    for v in cut_off:
        assert v.served_by == survivor.addr and len(v.socket_upstreams) >= 2, v
    for v in after:
        assert v.ok and v.page_upstream == survivor.addr and v.served_by == survivor.addr, f"{v}\n{logs}"


@pytest.mark.browser
def test_every_page_through_the_proxy_in_chromium(cluster, browser, printout):
    """Chromium through nginx: every page in the app's navigation renders with zero CSP violations; then the replica
    serving the tab is killed and the tab opens a websocket to the live one by itself, its page still shown without
    an error (the frontend does not run the page again by itself)."""
    record = (
        "window.__csp = []; document.addEventListener('securitypolicyviolation', "
        "e => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`))"
    )
    seen: dict[str, list[str]] = {}
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    try:
        context.add_init_script(record)
        page = context.new_page()
        console = []
        page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(f"{cluster.url}/")
        page.wait_for_selector(APP_IDLE, timeout=180_000)
        urls = page.eval_on_selector_all("[data-testid='stSidebarNav'] a", "links => links.map(a => a.href)")
        assert len(urls) >= 2, f"no navigation found: {urls}"
        for url in urls:
            page.goto(url)
            settle(page, timeout=180_000)
            seen[url] = page.evaluate("window.__csp")
        cookies = {c["name"]: c for c in context.cookies()}

        # the replica this tab lives on dies; the frontend polls health and reconnects through the proxy
        served = _served(context.request.get(f"{cluster.url}/_stcore/health").headers["x-upstream"])
        victim = cluster.replica(served)
        try:
            with page.expect_websocket(timeout=30_000):  # the frontend's new websocket, through the proxy
                os.kill(victim.pid, signal.SIGKILL)
            reconnected = True
        except PlaywrightTimeout:
            reconnected = False
        settle(page, timeout=180_000)
        after_kill = {
            "exceptions": page.locator("[data-testid='stException']").count(),
            "title": page.locator("h1").first.inner_text() if page.locator("h1").count() else "",
            "served by": _served(context.request.get(f"{cluster.url}/_stcore/health").headers["x-upstream"]),
        }
    finally:
        context.close()
    for url, violations in seen.items():
        printout(f"{url}: {len(violations)} CSP violation(s) {violations}")
    printout(f"killed {victim.name} under the tab on {urls[-1]}: reconnected {reconnected}, then {after_kill}")
    assert not any(seen.values()), f"CSP violations: {seen}\nconsole: {console}"
    assert console == [], console
    route = cookies["mpviz_route"]
    assert route["httpOnly"] and route["sameSite"] == "Lax" and route["path"] == "/"
    assert reconnected, f"the tab opened no new websocket after {victim.name} died\n{cluster.logs()}"
    assert after_kill["exceptions"] == 0 and after_kill["title"], after_kill
    assert after_kill["served by"] != victim.addr, after_kill
