"""Which view shows a claim's evidence: the evidence's type picks it.

A view module registers its functions with `@shows(EvidenceType)`; `view_of` walks the evidence's class and its
bases, so a subclass of an evidence type (e.g. mpviz.claims.PromoteListEvidence) may have a view of its own. Evidence
without a registered view gets `words_only`: the claim's explanation filled with its headline and the evidence's own
fields. So a new claim needs no line here: its check returns its evidence, its words name those fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block
from mpviz.presentation.claim_evidence.words import say

__all__ = ["View", "shows", "view_of", "words_only"]

View = Callable[[claims.Checked, Mapping], tuple[Block, ...]]
_VIEWS: dict[type, View] = {}


def shows(*evidence_types: type) -> Callable[[View], View]:
    """Register the decorated function as the view of each of `evidence_types` (each type has one view)."""

    def register(view: View) -> View:
        for kind in evidence_types:
            if kind in _VIEWS:
                raise ValueError(f"{kind.__qualname__} has a view already: {_VIEWS[kind].__qualname__}")
            _VIEWS[kind] = view
        return view

    return register


def words_only(c: claims.Checked, words: Mapping) -> tuple[Block, ...]:
    """The explanation filled with the claim's headline and its evidence's top-level fields (a dataclass's)."""
    ev = c.evidence
    fields = dict(c.headline)
    if dataclasses.is_dataclass(ev) and not isinstance(ev, type):
        fields |= {f.name: getattr(ev, f.name) for f in dataclasses.fields(ev)}
    return (say(c, words, fields),)


def view_of(evidence: object) -> View:
    """The view registered for `evidence`'s type or its nearest base; `words_only` for any other."""
    return next((_VIEWS[kind] for kind in type(evidence).__mro__ if kind in _VIEWS), words_only)
