"""A browser's Streamlit session without the browser, for the warm-up, load tests and the bench: one websocket per
session.

A session connects to `/_stcore/stream` (subprotocol "streamlit"), sends one binary
`BackMsg(rerun_script=ClientState(query_string=...))` and reads binary `ForwardMsg`s until the script run has
finished for good (a run that ends early for an `st.rerun()` goes on).
"""

import asyncio
import math
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

# Not st.* API: the wire protocol the browser speaks, to be a browser without one; a change in it breaks the load
# test and `bench` (tests/test_load.py), never the app.
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

T = TypeVar("T")
MAX_MESSAGES_PER_RUN = 5000  # bounds the read loop, far above what one run of a page sends
MAX_MESSAGE_BYTES = 64 * 2**20
OPEN_TIMEOUT_S = 120  # a websocket's handshake, beside hundreds of others on a loaded 2-core machine
SUCCESS = ForwardMsg.ScriptFinishedStatus.Name(ForwardMsg.FINISHED_SUCCESSFULLY)
RERUN = ForwardMsg.ScriptFinishedStatus.Name(ForwardMsg.FINISHED_EARLY_FOR_RERUN)


@dataclass
class SessionRun:
    """What one student's browser received for one page load."""

    query: str
    latency_s: float = math.nan  # rerun_script sent → final script_finished received
    statuses: list[str] = field(default_factory=list)  # every script_finished, in order
    headings: list[tuple[str, str]] = field(default_factory=list)  # (tag, body) of the last run
    components: list[bytes] = field(default_factory=list)  # bytes payloads of st.components.v2 mounts, last run
    exceptions: list[str] = field(default_factory=list)  # exception elements of any run
    alerts: list[str] = field(default_factory=list)  # bodies of st.error/warning/info/success, last run
    received_bytes: int = 0  # every ForwardMsg of the page load, as sent
    deltas: int = 0  # of them, the deltas (elements and blocks)

    @property
    def ok(self) -> bool:
        return bool(self.statuses) and self.statuses[-1] == SUCCESS and not self.exceptions


def rerun_request(base_url: str, query: str, path: str = "", locale: str = "en-US") -> bytes:
    """The BackMsg a browser in `locale` sends right after connecting to `base_url/path?query` (path "" = the
    navigation's default page, URL "/")."""
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = query  # without the "?"
    state.page_script_hash = ""  # the page is named by its URL path instead
    state.page_name = path
    state.context_info.url = f"{base_url}/{path}?{query}"
    state.context_info.timezone = "UTC"
    state.context_info.locale = locale
    return msg.SerializeToString()


async def open_page(
    base_url: str,
    query: str,
    *,
    path: str = "",
    locale: str = "en-US",
    headers: dict[str, str] | None = None,
    address: tuple[str, int] | None = None,
    hold: asyncio.Event | None = None,
    finished: Callable[[SessionRun], object] | None = None,
) -> SessionRun:
    """Connect one session to `base_url/path?query` as a browser in `locale` (sending `headers` with the websocket's
    upgrade request, as a browser sends its cookies or a proxy its X-Forwarded-For; dialling `address` instead of
    `base_url`'s host where that names a Host the server allows but does not resolve), request the page and read
    ForwardMsgs until its run has finished for good. With `hold`, the session then calls `finished(run)` and stays
    connected until `hold` is set, as an open tab does (a flood of connected sessions)."""
    run = SessionRun(query)
    ws_url = base_url.replace("http://", "ws://") + "/_stcore/stream"
    dial = {"host": address[0], "port": address[1]} if address is not None else {}
    async with connect(
        ws_url,
        subprotocols=[Subprotocol("streamlit")],
        max_size=MAX_MESSAGE_BYTES,
        compression=None,
        open_timeout=OPEN_TIMEOUT_S,
        ping_interval=None,
        additional_headers=headers,
        **dial,
    ) as ws:
        started = time.perf_counter()
        await ws.send(rerun_request(base_url, query, path, locale))
        await _read_run(ws, run, started)
        if hold is not None:
            if finished is not None:
                finished(run)
            await hold.wait()
    return run


async def _read_run(ws, run: SessionRun, started: float) -> None:
    for _ in range(MAX_MESSAGES_PER_RUN):
        raw = await ws.recv(decode=False)
        run.received_bytes += len(raw)
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        run.deltas += kind == "delta"
        if kind == "new_session":  # a (re)started run, maybe of another page (a room's): the browser would replace it
            run.headings.clear()
            run.components.clear()
            run.alerts.clear()
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            which = element.WhichOneof("type")
            if which == "exception":
                run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            elif which == "alert":
                run.alerts.append(element.alert.body)
            elif which == "heading":
                run.headings.append((element.heading.tag, element.heading.body))
            elif which == "bidi_component" and element.bidi_component.WhichOneof("data") == "bytes":
                run.components.append(element.bidi_component.bytes)
        elif kind == "script_finished":
            run.statuses.append(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))
            if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                run.latency_s = time.perf_counter() - started
                return
    raise AssertionError(f"{run.query}: no final script_finished within {MAX_MESSAGES_PER_RUN} messages")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on a thread of its own: the caller's thread may already run an event loop (Playwright's
    sync API keeps one going for as long as a browser is open)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (with 30 samples, p95 is the 29th smallest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]
