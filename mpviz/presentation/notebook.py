"""`mpviz.show`: the stepper for your own model, in a notebook (Jupyter, VS Code, marimo).

    import mpviz
    mpviz.show(model, x)                     # forward + backward of model(x) under CPU autocast bf16
    mpviz.show(model, ids, kwargs={"labels": ids}, device="cuda", dtype="fp16")

A host of the view layer, as mpviz/cli/export.py is for the offline lesson file: the engine traces the model
(mpviz.model_bundle) and mpviz.presentation.widget's widget shows it, its words from locales/. `import mpviz` does not
load this module (nor anywidget): the package's `show` attribute imports it on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from mpviz.model_bundle import MAX_BYTES, MAX_EVENTS, ModelBundleError, model_bundle, model_stream
from mpviz.presentation import locales
from mpviz.presentation.widget import ProgressLine, StepperWidget, error_text, require_locale, stepper_widget


def show(
    model: nn.Module,
    *inputs: Any,
    device: str = "cpu",
    dtype: str | torch.dtype | None = "bf16",
    kwargs: Mapping[str, Any] | None = None,
    loss: Callable[[Any], torch.Tensor] | None = None,
    reference: bool = True,
    locale: str = locales.DEFAULT_LANGUAGE,
    max_events: int = MAX_EVENTS,
    max_bytes: int = MAX_BYTES,
    stream: bool = True,
) -> StepperWidget:
    """Trace `model(*inputs, **kwargs)` forward and backward under autocast(`dtype`) on `device` and return a widget
    that steps through every ATen op of it in the browser (see mpviz.model_bundle for the loss, the float64
    reference, which `reference=False` skips, and the limits). `dtype` None or "off" runs without autocast. Past
    `max_events` ops or `max_bytes` of bundle the widget streams: the browser gets the run's outline and the first
    steps, and fetches the others from this kernel as it steps (mpviz.event_chunks; the kernel keeps at most
    mpviz.event_chunks.MAX_STREAM_BYTES of them per model). `stream=False` refuses there instead (it stops tracing
    at `max_events`). Past what streaming holds, or for a request it cannot trace (a device without CUDA, a
    meta-device model, nothing requiring grad, a loss that is not a scalar floating tensor), it raises one
    ValueError that says what was wrong and what to do, in `locale`'s words. A trace longer than a second shows its
    progress in the cell; interrupting it (the kernel's stop button) leaves the model as it was.
    """
    require_locale(locale)  # before the trace, which may take a while
    progress = ProgressLine(locale)
    make = model_stream if stream else model_bundle
    try:
        made = make(
            model,
            inputs,
            device=device,
            dtype=dtype,
            kwargs=kwargs,
            loss=loss,
            reference=reference,
            max_events=max_events,
            max_bytes=max_bytes,
            progress=progress,
        )
    except ModelBundleError as err:
        raise ValueError(error_text(err, locale)) from err
    except KeyboardInterrupt:
        progress.close(interrupted=True)
        raise
    progress.close()
    bundle, chunks = made if stream else (made, None)
    return stepper_widget(bundle, locale, chunks)
