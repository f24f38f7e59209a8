"""Warm a fresh server in the background: every lesson's default view and every tour stop, opened once, as a visitor.

A fresh process has computed nothing: the first visitor of a lesson would wait for its traces, bundles, figures and
tables (seconds, tens of seconds for a tour stop on a loaded machine). `start(base_url)` opens, one after another on
a thread of its own, a session of this very server for each view a first visitor is likely to open (`visits`):
the home lesson first, then the other lessons at their defaults, then the tour's stops, each in English, then the
lessons again in Chinese (figures and tables carry their language's words). A session of its own is a visitor in
every respect: it fills exactly the caches a visitor's run fills (whatever keys the pages use), through the same
lanes and gates, and never more than one page run at a time (one of mpviz.app.serving.run_slots' slots; the other stays
free for visitors, and a visitor who asks for a view being warmed shares its computation instead of repeating it).

It starts after the server answers `/_stcore/health` and never delays it: serve.py's lifespan starts it (the
hosted paths: deploy/Dockerfile, the Space, the cluster); a plain `streamlit run app.py` has no start-up hook, so the
app's first run starts it there (`start_in_server`: a thread that begins once that visitor's run has ended).
$MPVIZ_WARM_UP=0 turns it off. Progress is logged (`warm-up: N/M …`), kept in `progress()`, and said on every page
while it lasts (`notice`): what is being computed and how far along the warm-up is.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import streamlit as st
from streamlit import config, runtime
from streamlit.logger import get_logger

from mpviz.app.serving import run_slots
from mpviz.app.websocket_session import open_page

__all__ = ["Progress", "Visit", "local_url", "notice", "open_view", "progress", "start", "start_in_server", "visits"]

_log = get_logger(__name__)  # Streamlit's handler: lines in the server's log beside its own
HEALTH_LIMIT_S = 120.0  # the server answers health within this, or there is nothing to warm
VISIT_LIMIT_S = 600.0  # one view's first run (a top-size tour stop on a busy machine) ends within this
YIELD_LIMIT_S = 15.0  # the warm-up waits at most this long for visitors' page runs to end before its next view
YIELD_POLL_S = 0.05
LOCALES = ("en-US", "zh-CN")  # a visitor's browser language picks the words (en, zh): both are warmed


@dataclass(frozen=True)
class Visit:
    """One view to open: a lesson's URL path ("" for the home lesson), its query, the browser's locale."""

    path: str
    query: str
    locale: str = "en-US"

    def __str__(self) -> str:
        return f"/{self.path}{'?' + self.query if self.query else ''} ({self.locale})"


@dataclass(frozen=True)
class Progress:
    """How far the warm-up is: `done` of `total` views opened (`failed` of them did not finish well), the view
    being opened now (None when idle or finished), and whether it has finished."""

    done: int = 0
    total: int = 0
    failed: int = 0
    current: str | None = None
    finished: bool = False


_state = Progress()
_started = False
_lock = threading.Lock()


def progress() -> Progress:
    return _state


def notice() -> None:
    """While the warm-up runs, one line above the page: how many views are ready and which one is computed now
    (a visitor who waits meanwhile knows why). Nothing once it has finished, or where it never started."""
    now = _state
    if now.total and not now.finished:
        from mpviz.app import text  # here: see `visits`

        words = text.section("queue")["warming"]
        st.caption("⏳ " + words.format(done=now.done, total=now.total, current=text.echo(now.current or "…")))


def _path(slug: str) -> str:
    from mpviz.app import lessons

    return "" if lessons.lesson(slug).home else slug


def visits() -> list[Visit]:
    """The views a first visitor most likely opens, most likely first: every lesson at its defaults (the home lesson
    first), each tour stop as its link opens it, then the lessons in the other languages."""
    # Here, not at the top: serve.py imports this module before the server listens, and mpviz imports torch (tens
    # of seconds on a busy machine) that health must not wait for. The warm-up thread imports them after health.
    from mpviz.app import lessons, tour

    home = [entry for entry in lessons.LESSONS if entry.home]
    ordered = home + [entry for entry in lessons.LESSONS if not entry.home]
    first, *others = LOCALES
    found = [Visit(_path(entry.slug), "", first) for entry in ordered]
    for n, stop in enumerate(tour.stops(), start=1):
        found.append(Visit(_path(stop.page), urlencode({**stop.query, "tour": n}), first))
    for locale in others:
        found += [Visit(_path(entry.slug), "", locale) for entry in ordered]
    return list(dict.fromkeys(found))


def local_url() -> str:
    """This server as a client on this machine reaches it (`server.address` and `server.port`; an address that means
    every interface is reached on loopback), with `server.baseUrlPath`."""
    address = config.get_option("server.address") or "127.0.0.1"
    if address in ("0.0.0.0", "::", ""):
        address = "127.0.0.1"
    host = f"[{address}]" if ":" in address else address
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"http://{host}:{config.get_option('server.port')}" + (f"/{base}" if base else "")


def _host_header() -> str | None:
    """A Host that `server.allowedHosts` accepts (serve.py refuses any other), or None to send the address's own:
    the first plain name listed, else a name under the first `*.domain`."""
    allowed = [h.strip() for h in config.get_option("server.allowedHosts") or () if h.strip()]
    if not allowed or "*" in allowed:
        return None
    plain = [h for h in allowed if "*" not in h]
    return plain[0] if plain else "warm-up" + allowed[0].lstrip("*")


async def open_view(base_url: str, visit: Visit) -> bool:
    """One session: ask for the view, read until its run has finished for good; True if it finished well."""
    address = None
    if (host := _host_header()) is not None:  # connect to our address, name an allowed host
        parts = urlsplit(base_url)
        address = (parts.hostname, parts.port)
        base_url = f"{parts.scheme}://{host}:{parts.port}{parts.path}"
    run = await open_page(base_url, visit.query, path=visit.path, locale=visit.locale, address=address)
    return run.ok


def _answering(base_url: str) -> bool:
    deadline = time.monotonic() + HEALTH_LIMIT_S
    headers = {"Host": host} if (host := _host_header()) is not None else {}
    while time.monotonic() < deadline:
        try:
            request = urllib.request.Request(f"{base_url}/_stcore/health", headers=headers)
            if urllib.request.urlopen(request, timeout=2).read() == b"ok":
                return True
        except OSError:
            pass
        time.sleep(0.5)  # the server is still starting: nothing to await but its port
    return False


def _prestart() -> None:
    """What every first visitor would otherwise wait for, begun before health answers: the worker processes first
    (mpviz.app.serving.workers: they import torch and probe autocast's dispatch keys on the other core), then the
    server's own imports (torch, the view models), on a thread of its own, so health is not held up."""
    t0 = time.perf_counter()
    from mpviz.app.serving import workers  # imports no torch: the workers start before the server's own imports

    workers.default_pool()
    from mpviz.app.serving import results  # noqa: F401

    _log.info("warm-up: imports done and worker processes started in %.1f s", time.perf_counter() - t0)


def _yield_to_visitors() -> None:
    """Background work comes after visitors: the next view is opened once no page run is going on, so a visitor
    who came meanwhile waits for at most the one view being warmed (or after YIELD_LIMIT_S, on a server never idle,
    where the views are computed by their visitors anyway)."""
    deadline = time.monotonic() + YIELD_LIMIT_S
    while run_slots.runs_in_progress() and time.monotonic() < deadline:
        time.sleep(YIELD_POLL_S)


def _warm(base_url: str, after: threading.Thread | None = None) -> None:
    global _state
    if after is None:  # a hosted server, starting: its worker processes and imports begin now, not with a visitor
        _prestart()
    todo = visits()  # (imports the lessons, and with them torch)
    _state = Progress(total=len(todo))
    if after is not None:  # the first visitor's run that started us: its page first, the warm-up after it
        after.join(VISIT_LIMIT_S)
    if not _answering(base_url):
        _log.warning("warm-up: %s did not answer health in %g s; nothing warmed", base_url, HEALTH_LIMIT_S)
        _state = Progress(total=len(todo), finished=True)
        return
    began, failed = time.perf_counter(), 0
    for n, visit in enumerate(todo):
        _yield_to_visitors()
        _state = Progress(n, len(todo), failed, str(visit))
        t0 = time.perf_counter()
        try:
            ok = asyncio.run(asyncio.wait_for(open_view(base_url, visit), VISIT_LIMIT_S))
        except Exception as e:  # a view that cannot be opened now is computed for its first visitor instead
            ok = False
            _log.warning("warm-up: %s failed: %s", visit, e)
        failed += not ok
        _log.info("warm-up: %d/%d %s in %.1f s%s", n + 1, len(todo), visit, time.perf_counter() - t0, "" if ok else "!")
    _state = Progress(len(todo), len(todo), failed, None, finished=True)
    from mpviz.app.serving.admission import default_cache

    cache = default_cache().stats()  # what a first visitor finds: every view's results, unless some were evicted
    _log.info(
        "warm-up: done, %d views in %.1f s (%d failed); results cache %.0f of %.0f MB, %d evicted",
        len(todo),
        time.perf_counter() - began,
        failed,
        cache.bytes / 2**20,
        cache.max_bytes / 2**20,
        cache.evictions,
    )


def start(base_url: str | None = None, *, after: threading.Thread | None = None) -> bool:
    """Warm this server (`local_url()` by default) on a daemon thread, once per process, once the thread `after`
    (if any) has ended; returns whether this call started it (False: already started, or $MPVIZ_WARM_UP=0)."""
    global _started
    if os.environ.get("MPVIZ_WARM_UP", "1").strip() == "0":
        return False
    with _lock:
        if _started:
            return False
        _started = True
    warm = threading.Thread(target=_warm, args=(base_url or local_url(), after), name="mpviz-warm-up", daemon=True)
    warm.start()
    return True


def start_in_server() -> bool:
    """From a run of the app: warm this server once if the process is a real Streamlit server that nothing warmed
    yet (a plain `streamlit run app.py`; under serve.py its lifespan already has). Never in AppTest or bare mode,
    which serve nobody. The warm-up begins once this run (its script thread) has ended, so the first visitor's page
    is not shared with it. Cheap after the first call: one flag read."""
    if _started or not runtime.exists() or config.get_option("global.appTest"):
        return False
    return start(after=threading.current_thread())
