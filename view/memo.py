"""One decorator that memoises a view model's result for the whole process, keyed by function and arguments.

A hand-written cache key that misses an input serves one session's result to another without any error. Here
the key is made, never written: the function's module and name, this session's language (words are inputs too),
and every argument, frozen into a tagged, hashable form in which `0.0` and `-0.0`, `1`, `1.0` and `True`, a list
and a tuple are different keys and NaN equals NaN. An argument that cannot be frozen (a tensor, an open file) is
refused with a TypeError rather than keyed by identity.

    @memoised                    # a plain result (rows, numbers, an engine result)
    @memoised(returns="figure")  # a plotly figure, shared (never mutate it)
    @memoised(returns="table")   # rows turned into one Arrow table st.dataframe only serialises
    @memoised(heavy=True)        # waits for the heavy lane's slot first (see view.results)
    @memoised(heavy=is_long)     # … when is_long(*args, **kwargs) says this call is heavy

`f.cached(*args, **kwargs)` says whether that call's result is already shared (a page shows no spinner then).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from array import array
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Literal, TypeVar

from mpviz.admission import default_cache
from view import results, text

__all__ = ["freeze", "memoised"]

T = TypeVar("T")
Returns = Literal["value", "figure", "table"]


def freeze(value: Any) -> Hashable:
    """`value` as a hashable key whose equality is the value's: each leaf tagged with its type, floats by their
    bits (so -0.0 is not 0.0 and NaN is NaN), containers and dataclasses field by field."""
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, (str, bytes, int, type(None), enum.Enum)):  # bool is an int: the tag tells them apart
        return (type(value).__qualname__, value)
    if isinstance(
        value, (tuple, list)
    ):  # floats by their bits here too: a tuple of floats keeps -0.0 and NaN's payload
        if value and set(map(type, value)) == {float}:  # a row of numbers (softmax logits): their bytes at C speed
            return (type(value).__qualname__, "float64", array("d", value).tobytes())
        return (type(value).__qualname__, tuple(freeze(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(freeze(v) for v in value))
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted((freeze(k), freeze(v)) for k, v in value.items())))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = tuple((f.name, freeze(getattr(value, f.name))) for f in dataclasses.fields(value))
        return (type(value).__module__, type(value).__qualname__, fields)
    raise TypeError(f"a memoised argument must be a plain value, not {type(value).__qualname__}")


def memoised(
    fn: Callable[..., T] | None = None, /, *, returns: Returns = "value", heavy: bool | Callable[..., bool] = False
) -> Callable[..., T]:
    """Decorate `fn` so that each distinct call is computed once per process and shared (see the module doc)."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        name = f"{fn.__module__}.{fn.__qualname__}"

        def key_of(args: tuple, kwargs: dict) -> tuple:
            return (name, text.language(), freeze(args), freeze(kwargs))

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> T:
            key = key_of(args, kwargs)
            compute = functools.partial(fn, *args, **kwargs)
            if returns == "figure":
                return results.shared_figure(key, compute)
            if returns == "table":
                return results.shared_table(key, compute)
            return results.shared(key, compute, heavy=heavy(*args, **kwargs) if callable(heavy) else heavy)

        def cached(*args: Any, **kwargs: Any) -> bool:
            key = key_of(args, kwargs)
            if returns != "value":  # results adds the kind and the language in front of figure and table keys
                key = (returns, text.language(), *key)
            return key in default_cache()

        call.cached = cached  # type: ignore[attr-defined]
        return call

    return decorate if fn is None else decorate(fn)
