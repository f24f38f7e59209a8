"""`mpviz.show` past the caps: the bundle streamed, not refused (mpviz.event_chunks, mpviz.model_bundle.model_stream,
mpviz.presentation.widget's protocol).

In process, no kernel: the chunk store, the protocol's answers (a fake comm: the widget's `send` captured), the
kernel-wide bound on widgets that keep chunks, and a tiny GPT-2 with caps small enough that it streams: the head
the browser gets first, and every event fetched through the widget's messages equal to the whole bundle's. The
stepper's side (fetching, pending steps) is tested under node: assets/components/stepper/test/stream.test.js.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
import torch
from torch import nn

import mpviz
from mpviz import model_bundle as mb
from mpviz.event_chunks import CHUNK_EVENTS, chunk_events, thin_event
from mpviz.model_bundle import ModelBundleError, model_bundle, model_stream
from mpviz.presentation import widget as widget_module
from mpviz.presentation.widget import STREAMS_KEPT, StepperWidget, chunk_reply
from tests.test_notebook import tiny_gpt2
from tests.test_stepper import bundle_schema

EVENT = {
    "i": 0,
    "key": "lin",
    "out": [
        {"dtype": "float32", "shape": [2, 2], "stats": {"numel": 4}, "sample": {"shape": [1, 2, 2]}},
        {"dtype": "int64", "shape": [2]},
    ],
}


def test_chunks_join_events_serialised_once_and_refuse_a_chunk_they_lack():
    encoded = [json.dumps({"i": i}).encode() for i in range(5)]
    chunks = chunk_events(encoded, 2)
    assert (chunks.size, chunks.count, len(chunks.chunks)) == (2, 5, 3)
    assert [e["i"] for k in range(3) for e in json.loads(chunks.chunk(k))] == list(range(5))
    assert chunks.nbytes == sum(map(len, chunks.chunks))
    for k in (-1, 3):
        with pytest.raises(IndexError):
            chunks.chunk(k)  # never wraps around to the last chunk
    with pytest.raises(ValueError):
        chunk_events(encoded, 0)


def test_a_thin_event_keeps_its_outline_and_drops_statistics_and_samples():
    thin = thin_event(EVENT)
    assert thin["out"] == [{"dtype": "float32", "shape": [2, 2]}, {"dtype": "int64", "shape": [2]}]
    assert thin["key"] == "lin" and "stats" in EVENT["out"][0]  # the event itself untouched


def test_the_protocol_answers_a_chunk_with_its_bytes_and_anything_else_in_words_or_not_at_all():
    chunks = chunk_events([b'{"i":0}', b'{"i":1}', b'{"i":2}'], 2)
    assert chunk_reply(chunks, {"type": "events", "chunk": 1}) == ({"type": "events", "chunk": 1}, [b'[{"i":2}]'])
    assert chunk_reply(chunks, {"type": "events", "chunk": 2})[0]["error"] == "no_chunk"
    assert chunk_reply(chunks, {"type": "events", "chunk": -1})[0]["error"] == "no_chunk"
    for bad in (True, "1", 1.0, None):
        assert chunk_reply(chunks, {"type": "events", "chunk": bad}) == (
            {"type": "events", "chunk": None, "error": "no_chunk"},
            [],
        )
    assert chunk_reply(None, {"type": "events", "chunk": 0}) == (
        {"type": "events", "chunk": 0, "error": "released"},
        [],
    )
    for other in ({"type": "place"}, [], "events", None):
        assert chunk_reply(chunks, other) == (None, [])


def _fake_comm(monkeypatch, w: StepperWidget) -> list:
    """What `w` sends, instead of a comm's messages."""
    sent = []
    monkeypatch.setattr(w, "send", lambda content, buffers=None: sent.append((content, buffers)))
    return sent


def test_the_widget_answers_the_steppers_messages_and_keeps_chunks_for_the_latest_few(monkeypatch):
    monkeypatch.setattr(widget_module, "_kept", type(widget_module._kept)())
    chunks = chunk_events([b'{"i":0}', b'{"i":1}'], 1)
    widgets = [StepperWidget(chunks=chunks, payload=b"{}") for _ in range(STREAMS_KEPT + 1)]
    sent = _fake_comm(monkeypatch, widgets[-1])
    widgets[-1]._handle_custom_msg({"type": "events", "chunk": 1}, [])
    widgets[-1]._handle_custom_msg({"type": "hello"}, [])
    assert sent == [({"type": "events", "chunk": 1}, [b'[{"i":1}]'])]
    assert widgets[0].chunks is None and all(w.chunks is chunks for w in widgets[1:])  # the oldest let go
    sent = _fake_comm(monkeypatch, widgets[0])
    widgets[0]._handle_custom_msg({"type": "events", "chunk": 1}, [])
    assert sent == [({"type": "events", "chunk": 1, "error": "released"}, [])]
    assert StepperWidget(payload=b"{}").chunks is None  # a whole bundle's widget listens to nothing


def test_a_model_past_the_caps_is_streamed_and_its_events_fetched_are_the_whole_bundles(monkeypatch):
    """A tiny GPT-2 (~330 ops) with a 100-op cap: the widget's payload is the head (thin events past the first
    chunk, meta.stream), valid against the schema, and the chunks fetched through its messages are the events of
    the same model's whole bundle."""
    model, ids = tiny_gpt2()
    whole = model_bundle(model, [ids], kwargs={"labels": ids}, reference=False).data
    w = mpviz.show(model, ids, kwargs={"labels": ids}, reference=False, max_events=100)
    payload = json.loads(w.payload)
    head = payload["bundle"]
    n = len(whole["events"])
    assert n > CHUNK_EVENTS and payload["meta"]["stream"] == {"events": n, "chunk": CHUNK_EVENTS}
    jsonschema.validate(head, bundle_schema())
    assert head["events"][:CHUNK_EVENTS] == whole["events"][:CHUNK_EVENTS]
    assert head["events"][CHUNK_EVENTS:] == [thin_event(e) for e in whole["events"][CHUNK_EVENTS:]]
    assert {k: v for k, v in head.items() if k != "events"} == {k: v for k, v in whole.items() if k != "events"}
    sent = _fake_comm(monkeypatch, w)
    for k in range(-(-n // CHUNK_EVENTS)):
        w._handle_custom_msg({"type": "events", "chunk": k}, [])
    fetched = [e for content, (data,) in sent for e in json.loads(data)]
    assert fetched == whole["events"]


def test_within_the_caps_nothing_is_streamed():
    bundle, chunks = model_stream(nn.Linear(4, 2), [torch.randn(3, 4)], reference=False)
    assert chunks is None and len(bundle.data["events"]) == bundle.data["counts"]["events"]
    assert "stream" not in json.loads(mpviz.show(nn.Linear(4, 2), torch.randn(3, 4)).payload)["meta"]


def test_past_what_streaming_holds_it_is_refused_in_words_that_name_the_fix(monkeypatch):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(3, 4)
    monkeypatch.setattr(mb, "MAX_STREAM_EVENTS", 8)
    with pytest.raises(ModelBundleError) as caught:
        model_stream(model, [x], max_events=5)
    assert (caught.value.code, caught.value.detail, caught.value.cap) == ("too_large_to_stream", "events", 8)
    with pytest.raises(ValueError, match=r"more than 8 ops .* more than mpviz.show streams.*a part of the model"):
        mpviz.show(model, x, max_events=5)
    monkeypatch.setattr(mb, "MAX_STREAM_EVENTS", 50_000)
    monkeypatch.setattr(mb, "MAX_STREAM_BYTES", 1000)
    with pytest.raises(ValueError, match=r"mpviz.show keeps at most 0\.000954 MB"):
        mpviz.show(model, x, max_events=5)
    with pytest.raises(ValueError, match="内核中最多"):
        mpviz.show(model, x, max_events=5, locale="zh")


def test_the_realsize_bench_is_a_bench_option_and_prints_the_streamed_figures(monkeypatch, capsys):
    """`mpviz bench --realsize` (mpviz/cli/realsize.py, minutes of children: faked here) prints each row as it
    comes, the streamed one with what the kernel keeps and how fast it answers a chunk; --json the whole result."""
    from mpviz import __main__ as cli
    from mpviz.cli import realsize

    row = {"variant": "stream", "seconds": 9.5, "peak_mb": 7800.0, "built_mb": 1700.0, "ops": 3207}
    row |= {"payload_bytes": 1_687_332, "kept_bytes": 4_269_708, "rss_after_mb": 3863.0}
    row |= {"fetch_ms": 0.004, "chunk_bytes": 348_020}

    def fake(echo=None):
        (echo or (lambda _line: None))(realsize._line(row))
        return {"medium": [row]}

    monkeypatch.setattr(realsize, "run_realsize", fake)
    assert cli.main(["bench", "--realsize"]) == 0
    printed = capsys.readouterr().out
    assert "3,207 ops, payload 1,687,332 B; kernel keeps 4,269,708 B" in printed and "answered in 4 us" in printed
    assert cli.main(["bench", "--realsize", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["medium"][0]["kept_bytes"] == 4_269_708
