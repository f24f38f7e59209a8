"""mpviz.presentation.view_models.scaler without a page: the knobs settled into a run, the run trained once and shared
(each step reported to the viewer who trains it), its words, its figures shared once finished, and the playback's
pace."""

import dataclasses

import pytest

from mpviz import scaler
from mpviz.model import AttentionConfig
from mpviz.presentation import memo
from mpviz.presentation.run_config import RunConfig
from mpviz.presentation.view_models import scaler as lesson

RC = RunConfig(AttentionConfig(seq_len=8, d_model=32), "cpu", "fp16")
KNOBS = lesson.Knobs(
    train_steps=4,
    lr=1e-2,
    accum=1,
    clip_norm=0.0,
    init_scale=256.0,
    growth_factor=2.0,
    backoff_factor=0.5,
    growth_interval=2,
    inject_inf="1, 9",
    loss_multiplier=1.0,
)


@pytest.fixture(autouse=True)
def host():
    """A fresh store shared in this process, as the app shares its results for a class (memo.InProcess)."""
    with memo.hosted(memo.InProcess()) as shared:
        yield shared


def test_knobs_settle_into_the_run_the_engine_accepts_and_say_what_changed():
    settled = lesson.settled(RC, KNOBS)
    assert settled.config.inject_inf == (1,) and settled.beyond == (9,)  # the box keeps 9, the run leaves it out
    assert settled.knobs.inject_inf == "1,9" and not settled.warnings
    bad = lesson.settled(RC, dataclasses.replace(KNOBS, inject_inf="x", growth_factor=1.0))
    assert bad.config.inject_inf == () and bad.knobs.inject_inf == ""
    assert len(bad.warnings) == 2 and "`x`" in bad.warnings[0] and "growth_factor" in bad.warnings[1]
    assert bad.config.scaler.growth_factor > 1.0 and bad.knobs.growth_factor == bad.config.scaler.growth_factor
    assert lesson.Knobs.of(dataclasses.asdict(KNOBS) | {"pace": "fast"}) == KNOBS
    with pytest.raises(ValueError):
        lesson.parse_steps("1," * 200)


def test_the_inspector_opens_a_step_that_exists_and_says_so_when_asked_for_another():
    assert lesson.inspected(2, 4) == (2, None)
    assert lesson.inspected(lesson.INSPECT_DEFAULT, 4) == (3, None)  # the default may lie beyond a short run
    step, problem = lesson.inspected(-5, 4)
    assert step == 0 and "`-5`" in problem


def test_the_run_is_trained_once_for_everyone_and_only_its_trainer_hears_each_step(monkeypatch):
    cfg = lesson.settled(RC, KNOBS).config
    heard: list[int] = []
    assert not lesson.run.cached(cfg)
    with lesson.reporting(on_step=lambda records: heard.append(len(records))):
        run = lesson.run(cfg)
    assert heard == [1, 2, 3, 4] and [r.step for r in run.steps if r.skipped] == [1]
    monkeypatch.setattr(scaler, "train", lambda cfg: pytest.fail("trained again"))
    with lesson.reporting(on_step=lambda records: pytest.fail("a shared run reports no steps")):
        assert lesson.run(cfg) is run and lesson.run.cached(cfg)

    r = run.steps[1]
    line = lesson.step_sentence(r, 1, cfg)
    assert line.startswith("**1:** ") and "inf injected" in line and "256 → 128" in line
    metrics = lesson.step_metrics(r)
    assert (
        "\n" not in metrics and metrics.count(" · ") == 4 and "|" not in metrics
    )  # five measures on a line that wraps
    assert "Measured here: 1 skipped step(s)" in lesson.scale_caption(list(run.steps))

    shared = lesson.step_figures(cfg, list(run.steps))  # finished and shared: built once for everyone
    assert all(a is b for a, b in zip(shared, lesson.step_figures(cfg, list(run.steps)), strict=True))
    partial = lesson.step_figures(cfg, list(run.steps[:2]))  # a run being shown: drawn for its viewer
    assert not any(a is b for a, b in zip(partial, lesson.step_figures(cfg, list(run.steps[:2])), strict=True))
    assert lesson.histogram(cfg, r) is lesson.histogram(cfg, r)


def test_a_chinese_and_an_english_viewer_share_one_training_run_each_in_their_own_words(host, monkeypatch):
    """The run holds no words (memoised without the language): the second viewer, in the other language, takes the
    first one's run and its recipe comparison; the words around them are each viewer's own."""
    cfg = lesson.settled(RC, KNOBS).config
    host.lang = "zh"
    run, recipes = lesson.run(cfg), lesson.recipes(cfg)
    zh_line = lesson.step_sentence(run.steps[1], 1, cfg)
    monkeypatch.setattr(scaler, "train", lambda cfg: pytest.fail("trained again for another language"))
    monkeypatch.setattr(scaler, "compare_recipes", lambda *a: pytest.fail("compared again for another language"))
    host.lang = "en"
    assert lesson.run.cached(cfg) and lesson.run(cfg) is run and lesson.recipes(cfg) is recipes
    en_line = lesson.step_sentence(run.steps[1], 1, cfg)
    assert "inf injected" in en_line and zh_line != en_line
    assert lesson.step_figures(cfg, list(run.steps))  # the finished run's figures, built for the English viewer
    host.lang = "zh"
    assert not lesson._finished_figure.cached(cfg, "scale")  # a figure holds words: one per language


def test_playback_shows_no_faster_than_the_pace_and_redraws_at_most_every_so_often():
    fast = lesson.Playback(total=4, pace="fast")
    assert list(fast.due([0, 1, 2], 1)) == [1, 2]
    assert fast.redraw(1) and not fast.redraw(2) and fast.redraw(4)  # the last step is always drawn
    assert fast.progress(2) == (0.5, "Step 2 of 4")
    slow = lesson.Playback(total=4, pace="5")
    slow.pacer.start()
    assert list(slow.due([0, 1, 2], 0)) == [0]  # the first at once, the rest at five a second
    slow.at_once()
    assert list(slow.due([0, 1, 2], 1)) == [1, 2]
