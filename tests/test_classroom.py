"""The classroom around the lessons, through AppTest: the guided lesson (every stop's words and link, the Next
chain), presenter mode (projector-sized charts, expert tables folded, the stepper's meta), follow-me without a
browser (a follower's first run opens the presenter's view), what a page change costs (figures shared between
sessions, published before the presenter's page runs), glossary tooltips, and hostile classroom URLs.

What the browser does with it (the stepper moving without a reload, a follower following within 2 s, the cost of
30 followers) is in tests/test_classroom_browser.py.
"""

import copy
import json
import re
import string

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from mpviz import claims
from mpviz.app import glossary, lessons, text, tour
from mpviz.app.follow import ENDED, PRESENTER_KEY_STATE
from mpviz.app.page import PERSONAL_KEYS
from mpviz.app.rooms import ROOMS, new_presenter_key
from mpviz.app.serving.admission import default_cache
from mpviz.app.url import BROWSER_KEYS, KEEP
from mpviz.policy import CATEGORIES, UNCLASSIFIED
from mpviz.presentation.figures import formats as formats_fig
from mpviz.presentation.figures import shared as shared_fig
from mpviz.presentation.figures import softmax as softmax_fig
from mpviz.presentation.figures import style
from mpviz.presentation.figures.shared import SharedFigure
from mpviz.presentation.figures.style import PRESENTER_FONT
from tests.apptest import failures, page_app
from tests.hostile import unsafe_markup

TOUR_WORDS = ("title", "question", "notice")
NUMBER = re.compile(r"(?<![\w.^])\d+(?:[.,]\d+)?(?![\w])")  # a number standing alone ("16" in float16 is not)


def _goto_targets(at) -> list[dict]:
    """The go-to channel's targets mounted in this run (the stepper's payload is bytes, the channel's JSON)."""
    return [
        json.loads(e.proto.json)["target"]
        for e in at.get("bidi_component")
        if e.proto.component_name.endswith("mpviz_goto")  # not the formats page's bit flipper, say
    ]


def _stepper_payload(at) -> dict:
    (mount,) = [e for e in at.get("bidi_component") if e.proto.WhichOneof("data") == "bytes"]
    return json.loads(mount.proto.bytes)


def _query(at) -> dict[str, str]:
    """The URL's query as the script left it (AppTest keeps values the test set as str, the script's as lists)."""
    return {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}


def _shown(at) -> set[str]:
    return {h.value for h in (*at.header, *at.subheader, *at.title)}


# ── the guided lesson ───────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize("lang", sorted(p.name for p in text.LOCALES.iterdir() if (p / "tour.toml").exists()))
def test_every_stop_has_words_that_quote_only_measurements(lang):
    words = text.load(lang, "tour")
    stops = tour.stops()
    assert 8 <= len(stops) <= 12
    assert set(words["stops"]) == {s.id for s in stops}, "the words and the stops are the same set"
    for stop in stops:
        assert stop.page in {entry.slug for entry in lessons.LESSONS}
        assert stop.target is not None or stop.section is not None, stop.id
        for key in TOUR_WORDS:
            template = words["stops"][stop.id][key]
            assert template.strip(), (stop.id, key)
            assert tour.fields(template) <= set(tour.FACTS), (stop.id, key)
            literal = "".join(t for t, *_ in string.Formatter().parse(template))  # the text between the fields
            assert not NUMBER.findall(literal), (lang, stop.id, key, NUMBER.findall(literal))
    assert set(text.load(lang, "tour")["bar"]) == set(text.load("en", "tour")["bar"])


THINK_FIRST = [n for n, s in enumerate(tour.stops(), start=1) if s.think_first]


def _notice(at, stop: tour.Stop) -> str:
    """The stop's "what to notice", filled after the page ran: in a popover, or in the bar once a think-first stop's
    answer is revealed (prefixed with the bar's words for it)."""
    if not stop.think_first:
        (popover,) = at.get("popover")
        (notice,) = [m.value for m in popover.markdown]
        return notice
    prefix = text.section("tour")["bar"]["answer"].split("{")[0]
    (answer,) = [m.value for m in at.markdown if m.value.startswith(prefix)]
    assert not at.get("popover"), "a revealed answer is in the bar, not behind another click"
    return answer.removeprefix(prefix).strip()


def _check_stop(at, n: int, stop: tour.Stop) -> None:
    """The page of stop `n` ran cleanly, shows its bar with every fact filled in, and shows what the stop names."""
    assert not failures(at), (n, failures(at))
    assert at.session_state["_page"] == stop.page and _query(at)["tour"] == str(n)
    words = tour.stop_words(stop)
    bar = [m.value for m in at.markdown if words["title"] in m.value]
    assert bar, (n, "the stop's bar")
    notice = _notice(at, stop)
    assert notice.startswith(words["notice"].split("{")[0]) and not re.search(r"[{}]", notice), (n, notice)
    assert text.section(stop.page)["title"] in _shown(at), (n, "the lesson ran")
    if stop.section is not None:
        assert text.section(stop.page)[stop.section] in _shown(at), (n, stop.section)
    if stop.target is not None:
        bundle = _stepper_payload(at)["bundle"]
        if "landmark" in stop.target:
            assert stop.target["landmark"] in bundle["landmarks"]
        if stop.target.get("nonfinite"):
            assert bundle["first_nonfinite"] is not None, "this run makes an inf: the stop names it"
        for key, value in stop.query.items():
            shown = {"device": bundle["run"]["device"], "softmax": bundle["run"]["config"]["softmax"]}
            assert shown.get(key, value) == value


def _on_screen(at) -> list[str]:
    """Every text AppTest sees in this run (markdown, captions, headings, alerts, buttons' labels)."""
    kinds = ("markdown", "caption", "title", "header", "subheader", "info", "warning", "error", "success", "code")
    return [e.value for kind in kinds for e in at.get(kind)] + [b.label for b in at.button]


def _check_hidden_answer(at, n: int) -> None:
    """A think-first stop before its reveal: its question and a Reveal button, and nothing of its lesson: no title,
    no stepper (its nodes' dtypes, its error panel, its place), no figure, no notice, no go-to."""
    assert not failures(at), (n, failures(at))
    stop = tour.stops()[n - 1]
    assert at.button(key="tour_reveal").label == text.section("tour")["bar"]["reveal"]
    assert _query(at).get("reveal") is None
    assert text.section(stop.page)["title"] not in _shown(at), (n, "the lesson waits for the reveal")
    assert not at.get("popover") and not at.get("bidi_component") and not at.get("plotly_chart"), n
    assert any(tour.fill(tour.stop_words(stop)["question"], stop) in m for m in _on_screen(at)), (n, "it asks")


@pytest.mark.parametrize("n", THINK_FIRST)
def test_a_think_first_stop_shows_its_answer_only_on_reveal(n):
    stop = tour.stops()[n - 1]
    at = page_app(lessons.lesson(stop.page).page, **stop.query, tour=str(n)).run()
    _check_hidden_answer(at, n)
    before = "\n".join(_on_screen(at))
    at.button(key="tour_reveal").click().run()
    _check_stop(at, n, stop)
    assert _query(at)["reveal"] == "1", "the link (and a presenter's class) shows the answer too"
    assert _goto_targets(at) == [tour.target(stop)]
    assert _notice(at, stop) not in before
    at.button(key="tour_back").click().run()  # another stop, and back: it asks again
    at.button(key="tour_next").click().run()
    _check_hidden_answer(at, n)


def test_at_least_four_stops_ask_before_they_show():
    assert len(THINK_FIRST) >= 4


def test_next_visits_every_stop_and_every_stop_link_opens_it():
    stops = tour.stops()
    at = page_app(lessons.lesson(stops[0].page).page, tour="1").run()
    links = {}
    for n, stop in enumerate(stops, start=1):
        if n > 1:
            at.button(key="tour_next").click().run()
        if stop.think_first:
            _check_hidden_answer(at, n)
            at.switch_page(lessons.lesson(stop.page).page)  # where the browser is (AppTest reruns its first page)
            at.button(key="tour_reveal").click().run()
        _check_stop(at, n, stop)
        target = tour.target(stop)
        assert _goto_targets(at) == [target], (n, "its place is delivered on arrival (on reveal: think first)")
        links[n] = _query(at)
        assert links[n] == {**{k: v for k, v in stop.query.items() if k in links[n]}, "tour": str(n)} | (
            {"reveal": "1"} if stop.think_first else {}
        )
    assert at.button(key="tour_next").disabled and not at.button(key="tour_back").disabled
    at.button(key="tour_back").click().run()
    _check_stop(at, len(stops) - 1, stops[-2])
    for n, stop in enumerate(stops, start=1):  # the link each stop leaves in the address bar, opened fresh
        fresh = page_app(lessons.lesson(stop.page).page, **links[n]).run()
        _check_stop(fresh, n, stop)  # a think-first stop's link, taken after the reveal, shows the answer
        assert _goto_targets(fresh) == [tour.target(stop)]


def test_leaving_the_tour_and_a_stop_on_another_page():
    at = page_app("mpviz/pages/formats.py", tour="2").run()  # stop 2 is on the attention lesson
    assert not failures(at)
    assert any(b.key == "tour_reopen" for b in at.button) and not _goto_targets(at)
    at.button(key="tour_leave").click().run()
    assert not failures(at) and "tour" not in at.query_params and not at.get("popover")


# ── presenter mode ──────────────────────────────────────────────────────────────────────────────────────────
def _axis_tick_sizes(at) -> list[int]:
    sizes = []
    for chart in at.get("plotly_chart"):
        layout = json.loads(chart.proto.spec)["layout"]
        base = layout.get("font", {}).get("size", 12)
        for name, axis in layout.items():
            if name.startswith(("xaxis", "yaxis")):
                sizes.append(axis.get("tickfont", {}).get("size", base))
    return sizes


CLAIMS_OPEN = {f"cards_{t}": "1" for t in claims.TOPICS}
EXPERT = {  # page → the expert sections presenter mode folds into expanders (their words)
    "policy": ("table", "how_probed"),
    "formats": ("summary",),  # its reference tables are folded in every mode (mpviz.app.page.reference)
}


@pytest.mark.parametrize("slug", ["policy", "formats", "claims"])
def test_presenter_mode_enlarges_every_chart_and_folds_expert_tables(slug):
    page = lessons.lesson(slug).page
    opened = CLAIMS_OPEN if slug == "claims" else {}  # the cards, where the charts are, opened
    normal = page_app(page, **opened).run()
    presenter = page_app(page, present="1", **opened).run()  # the same process: nothing leaks between sessions
    assert not failures(normal) and not failures(presenter)
    big, small = _axis_tick_sizes(presenter), _axis_tick_sizes(normal)
    assert big and len(big) == len(small)
    assert min(big) >= PRESENTER_FONT["axis"] > max(small)
    folded = {e.label for e in presenter.expander} - {e.label for e in normal.expander}
    words = text.section(slug)
    assert {words[k] for k in EXPERT.get(slug, ())} <= folded
    if slug == "claims":
        assert len(presenter.expander) > len(normal.expander)  # the per-op tables of the policy claims
    assert _query(presenter)["present"] == "1" and "present" not in normal.query_params


def test_presenter_stepper_is_scaled_and_reports_its_place():
    normal, presenter = (page_app("mpviz/pages/attention.py", **q).run() for q in ({}, {"present": "1"}))
    assert _stepper_payload(normal)["meta"] == {"key": "stepper", "locale": "en"}
    meta = _stepper_payload(presenter)["meta"]
    assert meta["scale"] > 1 and meta["publish"]
    assert _stepper_payload(normal)["bundle"] == _stepper_payload(presenter)["bundle"]


# ── follow-me, server side ──────────────────────────────────────────────────────────────────────────────────
def _presenter(page: str, key: str | None = None, **params: str):
    """A presenter's session whose browser has said its presenter key (AppTest runs no component JS: the key the
    component would report is put where mpviz/app/follow.py keeps it)."""
    at = page_app(page, present="1", **params)
    at.session_state[PRESENTER_KEY_STATE] = key or new_presenter_key()
    return at


def test_a_follower_opens_the_presenters_view_and_can_stop():
    presenter = _presenter("mpviz/pages/formats.py", value="70000", dtype="fp16").run()
    assert not failures(presenter)
    (code,) = re.findall(r"follow=(\S+)", presenter.sidebar.code[0].value)  # the link handed to the students
    room = ROOMS.get(code)
    assert room.view.page == "formats" and room.view.query["dtype"] == "fp16"
    assert not set(room.view.query) & {*KEEP, *BROWSER_KEYS}, "a follower keeps its own settings"
    follower = page_app("mpviz/pages/attention.py", follow=code).run()  # the link lands on the home page
    assert not failures(follower)
    assert follower.session_state["_page"] == "formats" and _query(follower)["value"] == "70000"
    assert follower.session_state["dtype"] == "fp16" and _query(follower)["follow"] == code
    assert any(code in i.value for i in follower.sidebar.info)
    follower.switch_page("mpviz/pages/formats.py")  # where the browser now is (AppTest reruns its own page otherwise)
    follower.sidebar.button(key="stop_following").click().run()
    assert not failures(follower) and "follow" not in follower.query_params
    assert follower.session_state["_page"] == "formats" and follower.session_state["value"] == "70000"
    presenter.toggle(key="present").set_value(False).run()  # presenter mode off: the room closes
    assert ROOMS.get(code) is None


def test_a_follower_not_on_the_presenters_page_is_taken_there_again():
    """A view taken whose page run never came (a rerun lost in a race of reruns; here: the student opened another
    lesson) is taken again at the next run or poll: following shows the presenter's page until one stops."""
    presenter = _presenter("mpviz/pages/softmax.py").run()
    (code,) = re.findall(r"follow=(\S+)", presenter.sidebar.code[0].value)
    follower = page_app("mpviz/pages/attention.py", follow=code).run()
    assert not failures(follower) and follower.session_state["_page"] == "softmax"
    follower.switch_page("mpviz/pages/policy.py").run()  # the room's version is the one this follower took
    assert not failures(follower) and follower.session_state["_page"] == "softmax"


def test_the_presenter_sees_the_room_a_qr_code_and_how_many_follow_and_no_url_names_it():
    words = text.section("classroom")
    presenter = _presenter("mpviz/pages/policy.py").run()
    assert not failures(presenter)
    code = presenter.session_state["_room"]
    assert ROOMS.get(code) is not None and "room" not in _query(presenter), "the room is the key's, not the URL's"
    (qr,) = [h.proto.body for h in presenter.get("html") if "class='mpviz-qr'" in h.proto.body]
    assert "<svg" in qr and "http" not in qr.split("aria-label")[0]  # drawn here, nothing fetched
    assert any(m.value == words["audience"].format(n=0) for m in presenter.markdown)
    follower = page_app(
        "mpviz/pages/policy.py", follow=code
    ).run()  # (AppTest gives every session one id: one follower)
    assert not failures(follower)
    presenter.run()
    assert any(m.value == words["audience"].format(n=1) for m in presenter.markdown)
    assert "room" not in _query(follower), "a follower's own URL does not name the presenter's room"
    presenter.toggle(key="present").set_value(False).run()
    assert ROOMS.get(code) is None and "room" not in presenter.query_params


def test_a_presenter_link_naming_a_room_gives_nobody_that_room():
    teacher_key = new_presenter_key()
    teacher = _presenter("mpviz/pages/attention.py", key=teacher_key).run()
    code = teacher.session_state["_room"]
    intruder = _presenter("mpviz/pages/glossary.py", room=code).run()  # present=1&room=CODE, another browser's key
    assert not failures(intruder) and intruder.session_state["_room"] != code
    assert "room" not in _query(intruder)
    intruder.run()
    assert ROOMS.get(code).view.page == "attention", "the class stays with the teacher"
    without_key = page_app("mpviz/pages/glossary.py", present="1", room=code).run()  # no key said yet: no room at all
    assert not failures(without_key) and "_room" not in without_key.session_state
    back = _presenter("mpviz/pages/formats.py", key=teacher_key).run()  # the teacher's reload: the same room
    assert back.session_state["_room"] == code and ROOMS.get(code).view.page == "formats"


def test_a_presenter_whose_room_ended_is_told_and_chooses_a_new_one():
    key = new_presenter_key()
    teacher = _presenter("mpviz/pages/policy.py", key=key).run()
    code = teacher.session_state["_room"]
    ROOMS.close(code, key)  # ended while the teacher's tab was away (a restart, DEPARTED_S)
    back = _presenter("mpviz/pages/policy.py", key=key)
    back.session_state["_stored_room"] = code  # what the browser kept beside its key
    back.run()
    assert not failures(back) and back.session_state[ENDED] == code and "_room" not in back.session_state
    assert any(code in w.value for w in back.warning), "told which room ended, not silently given another"
    back.button(key="new_room").click().run()
    assert not failures(back) and back.session_state["_room"] not in (None, code) and ENDED not in back.session_state


def test_a_hand_over_link_moves_the_room_to_another_device_once():
    key = new_presenter_key()
    teacher = _presenter("mpviz/pages/policy.py", key=key).run()
    code = teacher.session_state["_room"]
    teacher.sidebar.button(key="handover_make").click().run()
    (link,) = [c.value for c in teacher.sidebar.code if "handover=" in c.value]
    token = re.search(r"handover=([\w-]+)", link).group(1)
    assert f"follow={code}" in link and key not in link
    phone = page_app("mpviz/pages/attention.py", follow=code, handover=token).run()
    assert not failures(phone)
    assert (
        phone.session_state["present"] and phone.session_state["_room"] == code and phone.session_state["follow"] == ""
    )
    assert "handover" not in _query(phone) and "follow" not in _query(phone)
    again = page_app("mpviz/pages/attention.py", follow=code, handover=token).run()  # used: the link is spent
    assert not failures(again) and not again.session_state["present"] and any(w.value for w in again.warning)


def test_the_share_link_keeps_the_language_and_drops_every_personal_key():
    presenter = _presenter("mpviz/pages/formats.py", lang="en", value="70000").run()
    (link,) = [c.value for c in presenter.sidebar.code if "value=70000" in c.value]
    assert "lang=en" in link and not any(f"{k}=" in link for k in PERSONAL_KEYS)
    english = page_app("mpviz/pages/formats.py").run()  # an English browser, no ?lang: the link still says it
    (link,) = [c.value for c in english.sidebar.code]
    assert "lang=en" in link


# ── what a class costs the server: a page change, thirty times at once ─────────────────────────────────────
def _counted(monkeypatch, module, name: str) -> list:
    """Calls of figure builder `module.name` from now on (it still builds)."""
    calls, build = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(a) or build(*a, **k))
    return calls


def test_sessions_that_open_the_same_view_share_its_figures(monkeypatch):
    default_cache().clear()  # figures other tests built would hide the count
    built = _counted(monkeypatch, softmax_fig, "softmax_exp")
    first, second = page_app("mpviz/pages/softmax.py").run(), page_app("mpviz/pages/softmax.py").run()
    assert not failures(first) and not failures(second)
    assert len(built) == 1, "the second session shows the figure the first one built"
    assert [c.proto.spec for c in first.get("plotly_chart")] == [c.proto.spec for c in second.get("plotly_chart")]
    in_chinese = page_app("mpviz/pages/softmax.py", lang="zh").run()
    assert not failures(in_chinese) and len(built) == 2, "other words: a figure of their own"


def test_a_shared_figure_is_serialised_from_one_dict():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout=dict(title="t"))
    shared = SharedFigure(fig)
    assert shared.to_dict() == fig.to_dict()
    assert shared.to_dict() is shared.to_dict(), "not deep-copied again for every session that shows it"


def test_the_presenter_copy_raises_every_text_size_and_leaves_the_figure_as_it_was():
    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Scatter(x=[1, 2], y=[3, 4]), row=1, col=1)
    fig.add_trace(go.Heatmap(z=[[1, 2], [3, 4]]), row=1, col=2)
    fig.update_layout(title="t", yaxis=dict(title=dict(text="y", font=dict(size=40))))
    spec = fig.to_dict()
    before = copy.deepcopy(spec)
    shown = go.Figure(style.presented_spec(spec))
    assert spec == before, "the shared figure's dict is not changed"
    assert shown.layout.xaxis2.tickfont.size == PRESENTER_FONT["axis"], "every subplot's axes"
    assert shown.layout.xaxis2.tickfont.color == style.PRESENTER_INK
    assert shown.data[1].colorbar.tickfont.size == PRESENTER_FONT["axis"]
    assert shown.layout.yaxis.title.font.size == 40, "a larger size of the figure's own is kept"
    assert shown.layout.margin.t >= 2 * PRESENTER_FONT["title"], "room for the larger title"


def test_a_shared_figures_presenter_copy_is_made_once_for_every_presenter(monkeypatch):
    fig = SharedFigure(go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout=dict(title="t")))
    assert fig.presented() is fig.presented()
    assert fig.presented().to_dict() == style.presented_spec(fig.to_dict())
    assert fig.to_dict()["layout"].get("font") is None, "the shared figure itself keeps its own sizes"
    default_cache().clear()
    made = []
    real = shared_fig.presented_spec
    monkeypatch.setattr(shared_fig, "presented_spec", lambda spec: made.append(spec) or real(spec))
    first, second = (
        page_app("mpviz/pages/softmax.py", present="1").run(),
        page_app("mpviz/pages/softmax.py", present="1").run(),
    )
    assert not failures(first) and not failures(second)
    charts = len(first.get("plotly_chart"))
    assert charts and len(made) <= charts, "the second presenter shows the copies the first one made"
    assert [c.proto.spec for c in first.get("plotly_chart")] == [c.proto.spec for c in second.get("plotly_chart")]


def test_a_page_change_is_published_before_the_presenters_page_runs(monkeypatch):
    default_cache().clear()
    presenter = _presenter("mpviz/pages/policy.py").run()
    code = presenter.session_state["_room"]
    assert ROOMS.get(code).view.page == "policy"
    seen = []
    build = formats_fig.range_figure  # drawn by the formats page after its other sections
    monkeypatch.setattr(
        formats_fig, "range_figure", lambda *a, **k: seen.append(ROOMS.get(code).view.page) or build(*a, **k)
    )
    presenter.switch_page("mpviz/pages/formats.py").run()
    assert not failures(presenter)
    assert seen == ["formats"], "followers were sent to the new page while the presenter's run of it went on"


# ── glossary ────────────────────────────────────────────────────────────────────────────────────────────────
def test_glossary_tooltips_come_from_the_one_glossary_file():
    terms = glossary.terms()
    assert {*CATEGORIES, UNCLASSIFIED, "autocast", "cast", "ulp", "subnormal", "loss_scale"} <= set(terms)
    page = page_app("mpviz/pages/glossary.py").run()
    assert not failures(page)
    listed = "\n".join(m.value for m in page.markdown)
    assert all(t["term"] in listed and t["text"] in listed for t in terms.values())
    policy = page_app("mpviz/pages/policy.py").run()
    counts = next(h for h in policy.subheader if h.value == text.section("policy")["counts"])
    assert counts.proto.help == glossary.term_help(*CATEGORIES, UNCLASSIFIED)
    sidebar = page_app("mpviz/pages/attention.py").run().sidebar  # the run config's autocast dtype
    (dtype,) = [e.proto for e in sidebar.get("button_group") if e.proto.help]
    assert dtype.help == glossary.term_help("autocast") and terms["autocast"]["text"] in dtype.help


# ── hostile classroom URLs ──────────────────────────────────────────────────────────────────────────────────
def test_bad_classroom_parameters_warn_and_fall_back():
    at = page_app("mpviz/pages/glossary.py", tour="99", follow="x` [a](https://e.x)", present="maybe").run()
    assert not failures(at)
    warned = " ".join(w.value for w in at.warning)
    assert "tour=99" in warned and "present=maybe" in warned and "follow=" in warned
    assert not unsafe_markup(warned)
    assert not at.get("popover") and at.session_state["follow"] == ""
    waiting = page_app("mpviz/pages/glossary.py", follow="nobody_here").run()
    assert not failures(waiting) and any("nobody_here" in i.value for i in waiting.sidebar.info)
