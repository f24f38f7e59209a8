"""The GradScaler page under Streamlit's AppTest: the run as it trains, the shared result, Stop, Run again,
old and bad URLs, the recipe comparison, and a viewer who leaves mid-run."""

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from mpviz import scaler
from mpviz.app.serving.admission import default_cache, default_gate
from mpviz.run_watch import RunWatch, WatchState
from tests.apptest import failures, page_app

SMALL_RUN = {  # init scale 256: low enough that only injected infs overflow this small model
    "seq": "8",
    "dim": "32",
    "dtype": "fp16",
    "train_steps": "6",
    "inject_inf": "2",
    "init_scale": "256",
    "pace": "fast",
}


def page(**params: str) -> AppTest:
    return page_app("mpviz/pages/scaler.py", **{**SMALL_RUN, **params})


def charts(at: AppTest) -> list:
    return at.get("plotly_chart")


def watch(at: AppTest) -> RunWatch:
    return at.session_state["scaler_watch"]


def inspector_line(at: AppTest, step: int) -> str:
    return next(m.value for m in at.markdown if m.value.startswith(f"**{step}:**"))


@pytest.fixture
def no_training_after_first_run(monkeypatch):
    """Call it to make any further training fail the test: what the page shows must come from shared results."""

    def refuse(cfg):
        pytest.fail("trained again")

    return lambda: monkeypatch.setattr(scaler, "train", refuse)


def test_the_run_is_shown_as_it_trains_then_a_shared_link_draws_the_shared_result(no_training_after_first_run):
    at = page().run()
    assert not failures(at), failures(at)
    w = watch(at)
    assert w.state is WatchState.FINISHED and len(w.steps) == 6
    assert [r.step for r in w.steps if r.skipped] == [2]
    assert len(charts(at)) == 4  # scale, loss, zero fraction, exponent histogram
    assert not at.warning

    no_training_after_first_run()
    again = page(inspect="2").run()  # a second viewer of the same link: drawn from the shared result
    assert not failures(again), failures(again)
    line = inspector_line(again, 2)
    assert "inf injected" in line and "skipped" in line and "256 → 128" in line
    hist = next(c.value for c in again.caption if "float16's bits" in c.value)  # computed, not read from finfo
    assert "at or below 2.98e-08 (half the smallest subnormal) a value rounds to 0" in hist  # 2^-25 itself does


def test_inspector_sentences_follow_the_records():
    at = page(growth_interval="2").run()
    assert not failures(at)
    at.slider(key="inspect").set_value(1).run()
    line = inspector_line(at, 1)
    assert "gradients finite" in line and "parameters updated" in line and "256 → 512" in line
    at.slider(key="inspect").set_value(3).run()
    assert "clean steps in a row: 1 of 2" in inspector_line(at, 3)


def test_stop_keeps_what_was_shown_and_run_again_replays_the_shared_result(no_training_after_first_run):
    at = page().run()  # trains once: the finished run is shared
    w = watch(at)
    finished = list(w.steps)
    w.begin(w.key)  # as if Stop (its on_click is watch.stop) was pressed while step 2 was on screen
    for r in finished[:3]:
        w.show(r)
    w.stop()
    no_training_after_first_run()
    at.run()
    assert not failures(at), failures(at)
    assert any("Stopped after 3 of 6 steps" in i.value for i in at.info)
    assert len(watch(at).steps) == 3 and len(charts(at)) == 4
    assert at.slider(key="inspect").max == 2  # the inspector offers what was shown

    next(b for b in at.button if b.label == "Run again").click().run()  # replayed from step 0, not retrained
    assert not failures(at), failures(at)
    assert watch(at).state is WatchState.FINISHED and watch(at).steps == finished
    assert not any("Stopped" in i.value for i in at.info)


def test_bad_url_params_warn_and_run_with_defaults():
    bad = {"growth_factor": "0.5", "inject_inf": "x,y", "loss_multiplier": "3", "init_scale": "-1", "lr": "nan"}
    at = page(**bad).run()
    assert not failures(at), failures(at)
    text = " ".join(w.value for w in at.warning)
    for key in bad:
        assert key in text
    assert at.session_state["growth_factor"] == scaler.ScalerSettings.defaults().growth_factor  # a fresh scaler's
    assert at.session_state["lr"] == scaler.TrainConfig.lr and at.session_state["inject_inf"] == "10,30"


def test_the_old_loss_mult_key_still_opens_the_same_view():
    at = page(loss_mult="0.5").run()
    assert not failures(at) and not at.warning
    assert at.session_state["loss_multiplier"] == 0.5
    assert at.query_params["loss_multiplier"] == "0.5" and "loss_mult" not in at.query_params
    assert watch(at).steps[0].loss > 0 and watch(at).key.loss_multiplier == 0.5


def test_bf16_offers_a_switch_to_fp16():
    at = page(dtype="bf16", train_steps="2", inject_inf="").run()
    assert not failures(at)
    assert "bfloat16" in at.info[0].value
    next(b for b in at.button if b.label == "Switch the sidebar to float16").click().run()
    assert at.session_state["dtype"] == "fp16"


def test_recipes_section_draws_the_comparison_one_column_per_recipe():
    at = page(train_steps="4", recipes="1").run()
    assert not failures(at), failures(at)
    assert len(charts(at)) == 5
    table = at.table[0].value
    assert list(table.columns) == [
        "fp32",
        "bf16 autocast, no scaler",
        "fp16 autocast + GradScaler",
        "fp16 autocast, no scaler",
    ]
    assert (table.loc["peak KiB, whole step"].astype(float) > 0).all()
    assert list(table.loc["skipped steps"]) == ["—"] * 4  # the injected inf of the run above is left out here
    recipes = charts(at)[-1].proto.spec
    assert '"loss vs fp32"' in recipes  # the lower panel: each recipe against fp32


def test_injections_beyond_a_short_run_are_kept_in_the_box_but_not_run():
    at = page(inject_inf="2,30").run()
    assert not failures(at) and not at.warning
    assert at.text_input(key="inject_inf").value == "2,30"
    assert any("30" in c.value and "outside this 6-step run" in c.value for c in at.caption)
    assert [r.step for r in watch(at).steps if r.injected] == [2]


def test_a_viewer_who_leaves_mid_run_stops_the_training_and_frees_the_slot(monkeypatch):
    real_train = scaler.train

    def leave_after_two_steps(cfg):
        for record in real_train(cfg):
            yield record
            if record.step == 1:
                st.stop()  # what Streamlit raises at the next element once the session has gone

    monkeypatch.setattr(scaler, "train", leave_after_two_steps)
    at = page().run()
    assert not failures(at)
    assert default_gate().stats().running == 0
    assert default_cache().stats().entries == 0  # a partial run is never shared
    assert watch(at).state is WatchState.WATCHING and len(watch(at).steps) == 2


def test_an_overlong_injection_list_from_a_link_is_refused_not_echoed_whole():
    at = page(inject_inf=",".join(str(k) for k in range(3000))).run()
    assert not failures(at)
    (warning,) = at.warning
    assert "inject_inf=" in warning.value and len(warning.value) < 300  # the echo is cut short
    assert at.session_state["inject_inf"] == "10,30"  # the default demo injections instead


def test_the_link_a_view_writes_reopens_the_same_view():
    changed = {"lr": "0.005", "growth_interval": "3", "loss_multiplier": "0.25", "clip_norm": "1.5", "inspect": "4"}
    at = page(**changed).run()
    link = {k: at.query_params[k] for k in at.query_params}
    assert {k: link[k] for k in changed} == changed  # written back as given
    again = page_app("mpviz/pages/scaler.py", **link).run()
    assert not failures(again) and not again.warning
    for key in (*changed, "train_steps", "init_scale", "inject_inf", "pace"):
        assert again.session_state[key] == at.session_state[key], key
