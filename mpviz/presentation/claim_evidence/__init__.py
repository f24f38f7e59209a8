"""How the claims page shows each claim's evidence: one view per evidence type (`dispatch.shows`), kept in modules
that mirror mpviz.claims (autocast_policy, op_dtypes, gradients, grad_scaler, memory, api, values, softmax_range,
speed, accumulation, fp8), each returning the card's blocks as data (`blocks`), and the word helpers they share
(`words`). Every module of this package is imported (`load_views`), so that a view registers itself where it is
written: no list of views to keep in step with the claims. Words are looked up when a view runs, never at import,
so every card is built in its session's language."""

import importlib
import pkgutil

from mpviz.presentation.claim_evidence.dispatch import view_of
from mpviz.presentation.claim_evidence.words import BADGE_COLORS, badge, op_name

__all__ = ["BADGE_COLORS", "badge", "load_views", "op_name", "view_of"]


def load_views() -> None:
    """Import every module of this package (again: a no-op for those imported already)."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


load_views()
