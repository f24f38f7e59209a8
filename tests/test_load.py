"""Load test: a class of students opens one shared link at once, against a real `streamlit run app.py`.

Each student is a small asyncio client speaking the browser's protocol on `/_stcore/stream`: subprotocol
"streamlit", one binary `BackMsg(rerun_script=ClientState(query_string=...))`, then binary `ForwardMsg`s until
`script_finished`. Two waves of fresh sessions, half on one link and half on another: the first wave computes
the traces (cold `st.cache_resource`), the second finds them cached; then one session alone, for scale.
Behaviour is asserted; latencies are only printed (benchmarks measure speed, tests don't).
"""

import asyncio
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
STUDENTS = 12  # sessions per wave, split evenly over CONFIGS
CONFIGS = ("dtype=bf16&step=3", "dtype=fp16&seq=24&dim=48&heads=4&step=5")  # two links the teacher shared
TOTAL_TIMEOUT_S = 240  # both waves together
MAX_MESSAGES_PER_RUN = 5000  # bounds the read loop, far above what one run of the page sends
MAX_MESSAGE_BYTES = 64 * 2**20
PAGE_TITLE = "Attention, step by step"  # pages/attention.py TEXT["title"], its st.title
STEP_SUBHEADER = re.compile(r"#\d+ · `[^`]+`")  # TEXT["step_title"]: the st.subheader of the current op
SUCCESS = ForwardMsg.ScriptFinishedStatus.Name(ForwardMsg.FINISHED_SUCCESSFULLY)
RERUN = ForwardMsg.ScriptFinishedStatus.Name(ForwardMsg.FINISHED_EARLY_FOR_RERUN)


@dataclass
class SessionRun:
    """What one student's browser received for one page load."""

    query: str
    latency_s: float = math.nan  # rerun_script sent → final script_finished received
    statuses: list[str] = field(default_factory=list)  # every script_finished, in order
    headings: list[tuple[str, str]] = field(default_factory=list)  # (tag, body) of the last run
    markdown: list[str] = field(default_factory=list)  # markdown/caption bodies of the last run
    exceptions: list[str] = field(default_factory=list)  # exception elements of any run


def _rerun_request(base_url: str, query: str) -> bytes:
    """The BackMsg a browser sends right after connecting to `base_url/?query` (the default page)."""
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = query  # without the "?"
    state.page_script_hash = ""  # "" = the navigation's default page (URL "/")
    state.context_info.url = f"{base_url}/?{query}"
    state.context_info.timezone = "UTC"
    state.context_info.locale = "en-US"
    return msg.SerializeToString()


async def _open_page(base_url: str, query: str) -> SessionRun:
    """Connect one session, request the page and read ForwardMsgs until its run has finished for good."""
    run = SessionRun(query)
    ws_url = base_url.replace("http://", "ws://") + "/_stcore/stream"
    async with connect(
        ws_url,
        subprotocols=[Subprotocol("streamlit")],
        max_size=MAX_MESSAGE_BYTES,
        compression=None,
        open_timeout=60,
        ping_interval=None,
    ) as ws:
        started = time.perf_counter()
        await ws.send(_rerun_request(base_url, query))
        for _ in range(MAX_MESSAGES_PER_RUN):
            msg = ForwardMsg()
            msg.ParseFromString(await ws.recv(decode=False))
            kind = msg.WhichOneof("type")
            if kind == "new_session":  # a (re)started run: the browser would replace what it showed
                run.headings.clear()
                run.markdown.clear()
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                which = element.WhichOneof("type")
                if which == "exception":
                    run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
                elif which == "heading":
                    run.headings.append((element.heading.tag, element.heading.body))
                elif which == "markdown":
                    run.markdown.append(element.markdown.body)
            elif kind == "script_finished":
                run.statuses.append(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))
                if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:  # st.rerun() goes on
                    run.latency_s = time.perf_counter() - started
                    return run
        pytest.fail(f"{query}: no final script_finished within {MAX_MESSAGES_PER_RUN} messages")


async def _wave(base_url: str) -> list[SessionRun]:
    """STUDENTS fresh sessions at once, alternating over CONFIGS."""
    queries = [CONFIGS[i % len(CONFIGS)] for i in range(STUDENTS)]
    return list(await asyncio.gather(*(_open_page(base_url, q) for q in queries)))


async def _class(base_url: str) -> dict[str, list[SessionRun]]:
    cold = await _wave(base_url)  # first sessions of a fresh process: the traces are computed in this wave
    warm = await _wave(base_url)  # a second class on the same links: st.cache_resource already holds them
    solo = [await _open_page(base_url, CONFIGS[0])]  # one student alone: the waves queue on the GIL
    return {"cold": cold, "warm": warm, "solo": solo}


def _percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (with 12 samples p95 is the maximum)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _check(runs: list[SessionRun], wave: str, log: str) -> None:
    for r in runs:
        where = f"{wave} wave, ?{r.query}, script_finished {r.statuses}"
        assert r.statuses and r.statuses[-1] == SUCCESS, f"{where}: run did not finish successfully\n{log}"
        assert set(r.statuses[:-1]) <= {RERUN}, where
        assert not r.exceptions, f"{where}: exception elements {r.exceptions}\nserver log tail:\n{log}"
        assert ("h1", PAGE_TITLE) in r.headings, f"{where}: page title missing from {r.headings}"
        assert any(tag == "h3" and STEP_SUBHEADER.fullmatch(body) for tag, body in r.headings), (
            f"{where}: no step subheader in {r.headings}"
        )
        assert any("autocast" in body for body in r.markdown), f"{where}: page markdown missing"
    for query in CONFIGS:  # one shared trace per link: every student on it sees the same op at the same step
        shown = {b for r in runs if r.query == query for _, b in r.headings if STEP_SUBHEADER.fullmatch(b)}
        assert len(shown) <= 1, f"{wave} wave, ?{query}: students saw different ops {shown}"


def test_a_class_opens_one_link_at_once(streamlit_server):
    base_url, log_path = streamlit_server
    started = time.perf_counter()
    waves = asyncio.run(asyncio.wait_for(_class(base_url), TOTAL_TIMEOUT_S))
    elapsed = time.perf_counter() - started
    lines = [f"load: {STUDENTS} fresh sessions per wave over {len(CONFIGS)} links, all in {elapsed:.1f} s"]
    for name, runs in waves.items():  # printed before the checks, so a failing run still shows its numbers
        latencies = [r.latency_s for r in runs]
        failed = sum(bool(r.exceptions) or r.statuses[-1:] != [SUCCESS] for r in runs)
        lines.append(
            f"  {name:>4} ({len(runs):>2} sessions): p50 {_percentile(latencies, 50):.2f} s, "
            f"p95 {_percentile(latencies, 95):.2f} s, max {max(latencies):.2f} s; failed runs: {failed}"
        )
    print("\n" + "\n".join(lines))
    log = log_path.read_text()[-3000:]
    for name, runs in waves.items():
        _check(runs, name, log)
