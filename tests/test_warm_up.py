"""What a fresh hosted server warms (mpviz/app/warm_up.py), without a server: the views, the address, the Host it names.
The warm-up itself, on a real `streamlit run serve.py`, is tests/test_load.py's first-visit test."""

import subprocess
import sys
import threading
from urllib.parse import parse_qs

import pytest
from streamlit import config

from mpviz.app import lessons, text, tour, warm_up
from mpviz.app.serving import run_slots
from tests.apptest import failures, page_app
from tests.conftest import ROOT


def test_every_lesson_and_every_tour_stop_is_warmed_the_home_lesson_first():
    visits = warm_up.visits()
    assert visits[0] == warm_up.Visit("", "", "en-US")
    english = [v for v in visits if v.locale == "en-US"]
    assert {v.path for v in english if not v.query} == {"" if e.home else e.slug for e in lessons.LESSONS}
    stops = {int(parse_qs(v.query)["tour"][0]): v for v in english if "tour=" in v.query}
    assert sorted(stops) == list(range(1, len(tour.stops()) + 1))
    for n, stop in enumerate(tour.stops(), start=1):  # each stop as its own link opens it
        assert stops[n].path == ("" if lessons.lesson(stop.page).home else stop.page)
        assert {k: v[0] for k, v in parse_qs(stops[n].query).items()} == {**stop.query, "tour": str(n)}
    assert {v.locale for v in visits} == set(warm_up.LOCALES) and len(set(visits)) == len(visits)


@pytest.mark.parametrize(
    ("address", "url"),
    [("0.0.0.0", "http://127.0.0.1:8765"), ("127.0.0.1", "http://127.0.0.1:8765"), ("::", "http://127.0.0.1:8765")],
)
def test_the_server_is_reached_on_its_own_address_or_on_loopback(monkeypatch, address, url):
    options = {"server.address": address, "server.port": 8765, "server.baseUrlPath": ""}
    monkeypatch.setattr(config, "get_option", options.__getitem__)
    assert warm_up.local_url() == url
    options["server.baseUrlPath"] = "/mpviz/"
    assert warm_up.local_url() == url + "/mpviz"


@pytest.mark.parametrize(
    ("allowed", "host"),
    [
        ([], None),
        (["*"], None),
        (["mpviz.example.org", "localhost"], "mpviz.example.org"),
        (["*.hf.space"], "warm-up.hf.space"),
    ],
)
def test_the_warm_up_names_a_host_the_server_accepts(monkeypatch, allowed, host):
    monkeypatch.setattr(config, "get_option", {"server.allowedHosts": allowed}.__getitem__)
    assert warm_up._host_header() == host


def test_no_warm_up_when_turned_off(monkeypatch):
    monkeypatch.setenv("MPVIZ_WARM_UP", "0")
    assert warm_up.start("http://127.0.0.1:1") is False


def test_serve_py_loads_without_torch_so_health_does_not_wait_for_it():
    """serve.py is imported before the server listens: the warm-up imports mpviz (torch) on its thread, later."""
    probe = "import sys, mpviz.app.serve; print(sorted({'torch', 'mpviz.trace', 'mpviz.model'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr[-2000:]


def test_pages_say_how_far_the_warm_up_is_while_it_runs_and_nothing_after(monkeypatch):
    words = text.load("en", "queue")["warming"].split("{")[0]
    monkeypatch.setattr(warm_up, "_state", warm_up.Progress(3, 30, 0, "/scaler (en-US)"))
    at = page_app("mpviz/pages/glossary.py")
    at.run()
    (said,) = [c.value for c in at.caption if words in c.value]
    assert "3 of 30" in said and "/scaler (en-US)" in said
    monkeypatch.setattr(warm_up, "_state", warm_up.Progress(30, 30, 0, None, finished=True))
    at = page_app("mpviz/pages/glossary.py")
    at.run()
    assert not [c for c in at.caption if words in c.value] and not failures(at)


def test_a_plain_streamlit_run_is_warmed_from_its_first_run_but_apptest_never_is(monkeypatch):
    """`streamlit run app.py` has no start-up hook: the app's run starts the warm-up (once); AppTest serves nobody."""
    started = []
    monkeypatch.setattr(warm_up, "start", lambda after: started.append(after) or True)
    monkeypatch.setattr(warm_up, "_started", False)
    at = page_app("mpviz/pages/glossary.py")
    at.run()
    assert not failures(at) and not started  # AppTest: no server to warm
    monkeypatch.setattr(warm_up.runtime, "exists", lambda: True)
    monkeypatch.setattr(config, "get_option", {"global.appTest": False}.__getitem__)
    assert warm_up.start_in_server() is True and started == [threading.current_thread()]  # after this run
    monkeypatch.setattr(warm_up, "_started", True)  # what start() sets: later runs only read the flag
    assert warm_up.start_in_server() is False and len(started) == 1


def test_the_warm_up_opens_its_next_view_only_once_no_visitor_runs_a_page(monkeypatch):
    """Background work comes after visitors: while a page run is going on (holding a slot or waiting), the warm-up
    waits before its next view; on a server never idle it goes on after YIELD_LIMIT_S."""
    began, release = threading.Event(), threading.Event()

    def visitor() -> None:
        with run_slots.page_run():
            began.set()
            release.wait(60)

    visiting = threading.Thread(target=visitor, daemon=True)
    visiting.start()
    assert began.wait(60) and run_slots.runs_in_progress() == 1
    warming = threading.Thread(target=warm_up._yield_to_visitors, daemon=True)
    warming.start()
    warming.join(0.5)
    assert warming.is_alive(), "the warm-up waits while a visitor's page runs"
    release.set()
    visiting.join(60)
    warming.join(60)
    assert not warming.is_alive() and run_slots.runs_in_progress() == 0

    monkeypatch.setattr(warm_up, "YIELD_LIMIT_S", 0.2)
    began.clear()
    release.clear()
    visiting = threading.Thread(target=visitor, daemon=True)
    visiting.start()
    assert began.wait(60)
    warm_up._yield_to_visitors()  # returns although the visitor's run goes on
    assert run_slots.runs_in_progress() == 1
    release.set()
    visiting.join(60)
