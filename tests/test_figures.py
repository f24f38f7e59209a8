"""Figure builders draw what the result objects say, with the words the page hands them (no English inside)."""

import math
from dataclasses import replace

from mpviz import scaler
from mpviz.model import AttentionConfig
from view import text
from view.figures import scaler as scaler_fig

SMALL = AttentionConfig(seq_len=8, d_model=32, n_heads=4)  # fp16 on CPU is slow: keep runs tiny


def test_scaler_figures_mark_what_the_records_say():
    cfg = scaler.TrainConfig(
        model=SMALL,
        steps=6,
        inject_inf=(2,),
        scaler=replace(scaler.ScalerSettings.defaults(), init_scale=2.0**8, growth_interval=2),
    )
    run = scaler.run(cfg)
    labels = text.load("en", "scaler")["labels"]
    fig = scaler_fig.scale_trace_figure(run.steps, labels=labels)
    names = {t.name for t in fig.data}
    assert {labels["skipped"], labels["injected"], labels["grow"], labels["backoff"]} <= names
    skipped = next(t for t in fig.data if t.name == labels["skipped"])
    assert list(skipped.x) == [2]
    assert fig.layout.yaxis.type == "log" and all(math.log2(v).is_integer() for v in fig.layout.yaxis.tickvals)
    hist = scaler_fig.scaled_gradient_histogram_figure(run.steps[0], run.format_range, labels=labels)
    assert len(hist.data) == 2 and len(hist.layout.shapes) == 3
    assert len(scaler_fig.zero_fraction_figure(run.steps, labels=labels).data) == 2
    assert len(scaler_fig.training_loss_figure(run.steps, labels=labels).data) == 2  # loss + skipped marks
