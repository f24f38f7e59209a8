"""The tutorial-claims page under Streamlit's AppTest: cards grouped by topic, the overview that links to them,
verdict and topic filters in the URL, slow checks through the admission gate, bad and hostile URLs."""

import dataclasses
import re

import pytest
from streamlit.testing.v1 import AppTest

from mpviz import claims
from mpviz.app import text
from mpviz.app.serving.admission import default_cache, default_gate
from mpviz.claims import grad_scaler, speed
from mpviz.model import AttentionConfig
from tests.apptest import failures, page_app
from tests.browser import APP_IDLE
from tests.hostile import unsafe_markup
from tests.test_view_claims import toy_claim  # noqa: F401  a new claim's four files, written outside the tree

VERDICT_WORDS = "|".join(text.load("en", "claims")["verdicts"].values())
BADGE = re.compile(rf"^:(green|orange|blue|red|gray)-badge\[({VERDICT_WORDS})\]$", re.MULTILINE)
TOPIC_ORDER = [c.id for c in sorted(claims.CLAIMS, key=lambda c: (claims.TOPICS.index(c.topic), c.id))]
OPEN = {f"cards_{t}": "1" for t in claims.TOPICS}  # every topic's cards opened


def page(**params: str) -> AppTest:
    return page_app("mpviz/pages/claims.py", **params)


def card_ids(at: AppTest) -> list[int]:
    return [int(s.value.split(".", 1)[0]) for s in at.subheader if s.value[0].isdigit()]


def verdict_badges(at: AppTest) -> list[str]:
    """The overall badge of each measured card: a line of its markdown that is nothing but one verdict badge."""
    return [badge.group(0) for m in at.markdown for badge in BADGE.finditer(m.value)]


def tally(at: AppTest) -> dict[str, int]:
    """The overview's verdict counts: label → number, read from its line of badges."""
    line = next(m.value for m in at.markdown if m.value.count("-badge[") >= 5)
    return {label: int(n) for label, n in re.findall(r"-badge\[([^:\]]+): \*\*(\d+)\*\*\]", line)}


def words(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_every_claim_gets_a_card_grouped_by_topic_with_sources_parts_and_measured_words():
    at = page(**OPEN).run()
    assert not failures(at), failures(at)
    assert not at.warning
    assert card_ids(at) == TOPIC_ORDER
    assert [h.value for h in at.main.header] == [text.load("en", "claims")["topics"][t] for t in claims.TOPICS]
    assert len(verdict_badges(at)) == 51  # 8 and 9 wait for the slow toggle
    assert sum("Switch on" in i.value for i in at.info) == 2
    counts = tally(at)
    assert counts["Depends on the device"] == 0 and counts["not measured yet"] == 2 and sum(counts.values()) == 53
    said = words(at)
    # the overview: one table per topic, every claim's number linking to its card's anchor
    for c in claims.CLAIMS:
        assert f"[{c.id}](#claim-{c.id})" in said
    assert "[↑ back to the overview](#at-a-glance)" in said
    # sources: readable titles and sections, never seed file names
    assert "From *How autocast manages precision in LLM training* › 1. How autocast works" in said
    assert not re.search(r"\d{3}_[0-9a-f]{16}\.txt", said)
    # parts, per device with each device's verdict
    assert ":red[**✗**] softmax of a bf16 tensor returns float32" in said
    assert "**CUDA's policy** :green-badge[Holds]" in said
    # measured numbers in the words: computed from this run, not recited from the tutorial
    assert "returns **bfloat16** on CPU and **float32** under CUDA's policy" in said  # claim 1
    # both ends of 10.1's bin are ties that round to the even neighbour, out of the bin: an open interval
    assert "10.1 falls in the rounding bin (10.09765625, 10.10546875) and is stored as 10.1015625" in said
    assert "The tutorial's 10.125 is bfloat16's value for 10.1." in said
    assert "The quoted 1.4e-45 is float32's smallest subnormal value (1.4013e-45)" in said
    assert "The quoted 6.1e-5 is float16's smallest normal value (6.1035e-05)" in said
    assert "(1/4 of bf16's spacing 0.0078125 at 1)" in said
    assert "its `_log_softmax` step runs in **float32** on CPU and in **bfloat16** under CUDA's policy" in said
    assert "fp16's exp overflows from x = 11.0938" in said and "stores it as **70144**" in said
    assert "multiplies the loss by **65536**" in said and "after `scaler.update()` it is **32768**" in said
    assert "Scores closer than the spacing do merge" not in said
    # every claim whose seed speaks of CUDA is judged on CUDA, and the card says so
    cuda_cards = sum("The tutorial speaks of CUDA: the verdict is that device's" in m.value for m in at.markdown)
    assert cuda_cards == 17  # 1, 3, 7, 10, 14, 15, 17, 24, 25, 26, 27, 38, 44, 45, 46, 47, 49
    assert "Measured under CPU's autocast policy" in said  # claim 30: the policy beside the verdict
    assert "70144 is the bf16 value nearest to it" in said and "keeps 70000 exactly" not in said  # claim 21


def test_the_cards_added_since_issue_17_render_with_a_verdict_in_english_and_chinese():
    new = [c for c in claims.CLAIMS if c.id >= 23]
    assert len(new) == 31
    for lang in ("en", "zh"):
        at = page(lang=lang, **OPEN) if lang == "zh" else page(**OPEN)
        at.run()
        assert not failures(at), (lang, failures(at))
        t = text.load(lang, "claims")
        titles = [s.value for s in at.subheader]
        verdicts = "|".join(re.escape(v) for v in t["verdicts"].values())
        for c in new:
            assert t["card_title"].format(id=c.id, claim=t["claims"][c.key]["claim"]) in titles, (lang, c.key)
            row = next(m.value for m in at.markdown if f"[{c.id}](#claim-{c.id})" in m.value)
            assert re.search(rf"\[{c.id}\]\(#claim-{c.id}\) \| [^|]+ \| :\w+-badge\[({verdicts})\]", row), (lang, c.key)
        said = words(at)
        assert "{" not in said and "None" not in said, lang  # every field filled, no refused call shown as None
    assert "65536" in said and "torch.softmax" in said


def test_verdict_and_topic_filters_from_the_url_and_from_the_widgets():
    at = page(verdict="depends_on_device", **OPEN).run()
    assert not failures(at)
    assert card_ids(at) == []  # every device-specific claim is judged on the device its seed speaks of
    assert "2 slow claim(s) are not measured yet" in words(at)
    at.segmented_control(key="verdict").set_value("does_not_hold").run()
    assert not failures(at)
    assert card_ids(at) == [10, 14, 16, 23, 39, 5, 6, 22, 33, 30, 35, 48, 12]
    assert set(verdict_badges(at)) == {":red-badge[Does not hold]"}
    at.segmented_control(key="topic").set_value("formats").run()
    assert card_ids(at) == [5, 6, 22, 33] and at.query_params["topic"] == "formats"
    assert "[12](#claim-12)" not in words(at)  # the overview lists what is shown
    at.segmented_control(key="verdict").set_value("inconclusive").run()
    assert card_ids(at) == [] and any("No measured claim" in i.value for i in at.info)


@pytest.fixture
def quick_slow_checks(monkeypatch):
    """The two slow checks on tiny sizes (same code paths), and a cache that forgets them afterwards."""
    monkeypatch.setattr(speed, "SPEED_BLOCK", AttentionConfig(seq_len=8, d_model=16, n_heads=2))
    monkeypatch.setattr(speed, "SPEED_MATMUL_N", 16)
    tiny = dataclasses.replace(grad_scaler.scaler_check_config(), steps=2)
    monkeypatch.setattr(grad_scaler, "scaler_check_config", lambda: tiny)
    default_cache().clear()
    yield
    default_cache().clear()


def test_slow_checks_run_on_demand_through_the_admission_gate(quick_slow_checks):
    admitted = default_gate().stats().admitted
    at = page(slow="1", topic="training").run()
    assert not failures(at), failures(at)
    assert card_ids(at) == [8, 9, 17, 18, 19, 29, 30, 35, 36, 48, 49]
    assert not any("Switch on" in i.value for i in at.info)
    assert tally(at)["not measured yet"] == 0
    assert default_gate().stats().admitted == admitted + 2  # claims 8 and 9, each through the gate
    said = words(at)
    assert "bf16 without a scaler lost **0** of them to zero" in said  # counted where the exact gradient is non-zero
    assert ":gray-badge[Cannot be decided here]" in verdict_badges(at)  # claim 9 on a CPU, whatever its numbers
    assert "this timing ran on a CPU: whatever its numbers, it cannot decide the claim" in said
    assert "What this timing can tell:" in said and "What it cannot tell: what GPU tensor cores gain" in said
    assert re.search(r"interquartile range [\d.]+–[\d.]+× over 7 interleaved rounds", said)


@pytest.mark.xdist_group("serial")  # the claims registry and the locale files are patched for this process
def test_a_new_claim_of_four_files_shows_on_the_page(toy_claim):  # noqa: F811  the fixture imported above
    at = page(topic="code").run()
    assert not failures(at), failures(at)
    said = words(at)
    assert "901. Doubling 21 gives 42" in [s.value for s in at.subheader]
    assert "Doubled: **42**." in said and "| 21 | 42 |" in said  # its own view: words, then its table
    assert "Answer: **42**" in said  # no view written: its words filled from its evidence's fields
    assert "[901](#claim-901)" in said and "From *05 - Mixed-precision training setup" in said


def test_bad_url_params_warn_and_fall_back_to_defaults():
    at = page(topic="[x](https://evil.example)", slow="perhaps")
    at.query_params["verdict"] = ["holds", "<img src=x onerror=alert(1)>"]  # a key given twice: the last counts
    at.run()
    assert not failures(at), failures(at)
    warned = " ".join(w.value for w in at.warning)
    assert "verdict=<img" in warned and "slow=perhaps" in warned and "topic=" in warned
    assert not any(unsafe_markup(w.value) for w in at.warning)
    assert at.session_state["verdict"] == "all" and at.session_state["topic"] == "all"
    assert at.session_state["slow"] is False
    assert card_ids(at) == [] and len(at.main.toggle) == 1 + len(claims.TOPICS)  # the overview; every topic folded


def test_a_class_opening_the_page_gets_the_overview_and_opens_a_topics_cards_itself():
    """By default every topic's cards are folded (a class of 30 loads the overview and four headings, not fifty
    cards): each number links to its topic's heading, where a toggle opens the cards; the URL keeps it."""
    at = page().run()
    assert not failures(at), failures(at)
    assert card_ids(at) == [] and [h.value for h in at.main.header] == [
        text.load("en", "claims")["topics"][t] for t in claims.TOPICS
    ]
    said = words(at)
    assert "[21](#topic-formats)" in said and "[1](#topic-autocast)" in said and "#claim-" not in said
    formats = [c.id for c in claims.CLAIMS if c.topic == "formats"]
    at.toggle(key="cards_formats").set_value(True).run()
    assert not failures(at), failures(at)
    assert card_ids(at) == sorted(formats) and at.query_params["cards_formats"] == "1"
    said = words(at)
    assert "[21](#claim-21)" in said and "[1](#topic-autocast)" in said
    assert f"Show its {len(formats)} card(s)" in " ".join(t.label for t in at.toggle)


@pytest.mark.browser
def test_an_overview_link_scrolls_to_its_card_in_a_real_browser(streamlit_server, browser):
    server, _ = streamlit_server
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        page.goto(f"{server}/claims?topic=formats")
        page.wait_for_selector(APP_IDLE, timeout=180_000)
        page.wait_for_selector("#claim-21", state="attached", timeout=60_000)
        outside = "() => document.querySelector('#claim-21').getBoundingClientRect().top"
        assert page.evaluate(outside) > 768  # below the fold before the click
        page.locator("a[href='#claim-21']").first.click()
        page.wait_for_function(f"() => {{ const top = ({outside})(); return 0 <= top && top < 768; }}")  # on screen
        assert page.locator("[data-testid='stException']").count() == 0
    finally:
        page.close()
