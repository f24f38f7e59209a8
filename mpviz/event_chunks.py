"""A bundle past the browser's caps, streamed: its events held in the kernel in chunks, fetched a chunk at a time.

`mpviz.model_bundle.model_stream` makes one when a model's bundle is past `MAX_EVENTS` ops or `MAX_BYTES`: the
notebook widget (mpviz.presentation.widget) then sends the browser a *head* first, the bundle whose every event
keeps its index fields (`thin_event`: all but its outputs' statistics and 8×8 samples, about a third of an event)
with the first chunk's events whole, and answers the stepper's requests for the other chunks as it steps.

The chunks are the events' JSON, serialised once (`EventChunks.chunk(k)` is the bytes of a JSON array of events
k·size … k·size + size − 1, in order), so an answer is a lookup. What the kernel keeps is bounded by
`MAX_STREAM_BYTES`: a trace whose events' JSON is past it (or whose head is past the browser's `MAX_BYTES`) is
refused by model_stream with an error that names the fix. No torch, no view here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CHUNK_EVENTS", "MAX_STREAM_BYTES", "MAX_STREAM_EVENTS", "EventChunks", "chunk_events", "thin_event"]

CHUNK_EVENTS = 256  # events per chunk: ~0.3 MB of JSON, one message the kernel answers in a millisecond
# The kernel's memory ceiling for one streamed model: its events' JSON, whole. A GPT-2-medium step (~5,000 ops) is
# ~7 MB of it; a model past this is refused (mpviz.model_bundle "too_large_to_stream").
MAX_STREAM_BYTES = 256 * 2**20
# Ops traced at most when streaming (the trace stops there): a head of this many thin events is ~20 MB, about
# what the browser takes in one piece (MAX_BYTES), and the trace's own records stay well under MAX_STREAM_BYTES × 2.
MAX_STREAM_EVENTS = 50_000


def thin_event(event: dict) -> dict:
    """`event` (the bundle's JSON of one op) with only what stepping through the whole run reads: its place, op,
    module, inputs, sources, casts and landmarks, its outputs' dtypes and shapes; no statistics, no samples."""
    return {**event, "out": [{"dtype": o["dtype"], "shape": o["shape"]} for o in event["out"]]}


@dataclass(frozen=True)
class EventChunks:
    """Every event of one streamed bundle as JSON, `size` events a chunk (the last may hold fewer)."""

    size: int  # events per chunk
    count: int  # events in all
    chunks: tuple[bytes, ...]

    @property
    def nbytes(self) -> int:
        """What the chunks hold in the kernel (their bytes)."""
        return sum(len(c) for c in self.chunks)

    def chunk(self, k: int) -> bytes:
        """Chunk `k`'s JSON array of events; IndexError for a chunk this bundle does not have (no wrap-around)."""
        if not 0 <= k < len(self.chunks):
            raise IndexError(k)
        return self.chunks[k]


def chunk_events(encoded: Sequence[bytes], size: int = CHUNK_EVENTS) -> EventChunks:
    """The chunks of events already serialised one by one (`encoded[i]`: event i's JSON), joined `size` at a time."""
    if size < 1:
        raise ValueError(f"chunk size {size} < 1")
    chunks = tuple(b"[" + b",".join(encoded[k : k + size]) + b"]" for k in range(0, len(encoded), size))
    return EventChunks(size, len(encoded), chunks)
