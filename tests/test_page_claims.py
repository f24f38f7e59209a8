"""The tutorial-claims page under Streamlit's AppTest: cards, verdict filter in the URL, slow checks, bad URLs."""

import re

from streamlit.testing.v1 import AppTest

from tests.apptest import failures, page_app

BADGE = re.compile(r"^:(green|orange|blue|red)-badge\[(.+)\]$")


def page(**params: str) -> AppTest:
    return page_app("pages/claims.py", **params)


def card_ids(at: AppTest) -> list[int]:
    return [int(s.value.split(".", 1)[0]) for s in at.subheader]


def verdict_badges(at: AppTest) -> list[str]:
    """The overall badge of each measured card (the first badge after its title; device badges carry a label)."""
    return [m.value for m in at.markdown if BADGE.match(m.value)]


def test_every_claim_gets_a_card_and_the_fast_ones_a_verdict():
    at = page().run()
    assert not failures(at), failures(at)
    assert not at.warning
    assert card_ids(at) == list(range(1, 12))
    assert len(verdict_badges(at)) == 9  # 8 and 9 wait for the slow toggle
    assert sum("Switch on" in i.value for i in at.info) == 2
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Depends on the device"] == "3" and metrics["not measured yet"] == "2"
    words = " ".join(m.value for m in at.markdown)
    assert "returns **bfloat16** on CPU and **float32** under CUDA's policy" in words  # claim 1, measured
    assert "10.1 and 10.2 are stored as 10.101562 and 10.203125 — still two different values" in words
    assert any("000_807445a89ff10fc0.txt" in c.value for c in at.caption)


def test_verdict_filter_from_the_url_and_from_the_widget():
    at = page(verdict="depends_on_device").run()
    assert not failures(at)
    assert card_ids(at) == [1, 3, 7]
    assert any("2 slow claim(s) are not measured yet" in c.value for c in at.caption)
    at.segmented_control(key="verdict").set_value("does_not_hold").run()
    assert not failures(at)
    assert card_ids(at) == [5, 6]
    assert set(verdict_badges(at)) == {":red-badge[Does not hold]"}


def test_slow_checks_run_on_demand():
    at = page(slow="1", verdict="holds").run()
    assert not failures(at), failures(at)
    assert 8 in card_ids(at) and 2 in card_ids(at) and 11 in card_ids(at)
    assert not any("Switch on" in i.value for i in at.info)
    assert {m.label: m.value for m in at.metric}["not measured yet"] == "0"
    words = " ".join(m.value for m in at.markdown)
    assert "bf16 without a scaler lost" in words


def test_bad_url_params_warn_and_fall_back_to_defaults():
    at = page(verdict="maybe", slow="perhaps").run()
    assert not failures(at), failures(at)
    text = " ".join(w.value for w in at.warning)
    assert "verdict=maybe" in text and "slow=perhaps" in text
    assert at.session_state["verdict"] == "all" and at.session_state["slow"] is False
    assert card_ids(at) == list(range(1, 12))
