"""One decorator that memoises a view model's result, keyed by function and arguments, never by a written key.

A hand-written cache key that misses an input serves one session's result to another without any error. Here the
key is made: the function's module and name, the language its words are in (words are inputs too), and every
argument, frozen into a tagged, hashable form in which `0.0` and `-0.0`, `1`, `1.0` and `True`, a list and a tuple
are different keys and NaN equals NaN. An argument that cannot be frozen (a tensor, an open file) is refused with a
TypeError rather than keyed by identity.

    @memoised                    # a plain result (rows, numbers, an engine result)
    @memoised(returns="figure")  # a plotly figure, shared (never mutate it)
    @memoised(returns="table")   # rows, which the app turns into one Arrow table st.dataframe only serialises
    @memoised(heavy=True)        # the app admits it through the heavy lane's gate first
    @memoised(heavy=is_long)     # … when is_long(*args, **kwargs) says this call is heavy
    @memoised(words=False)       # the result holds no words: one result for every language (a training run)
    @memoised(worker=True)       # the host may compute it in a worker process (fn module-level, arguments pickle)

`f.cached(*args, **kwargs)` says whether that call's result is already shared (a page shows no spinner then).

The language is part of the key unless `words=False`: a view model's words are in the language of the viewer
asking (`language()`, which the host says), so one left out of the key would serve a Chinese figure to an English
viewer. A result that holds no words (an engine run) says so, and a class in two languages shares one run.

Where results are kept is the host's business, not the view model's: without a host (a unit test, a notebook) each
call computes, in this process, in English; `InProcess()` keeps them in a dict (tests, a notebook); the Streamlit app
installs its process-wide, byte-bounded, single-flight store with `use()` (mpviz.app.serving.results), the session's
language with it, and runs `worker=True` calls in its worker pool.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib
from array import array
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, Protocol, TypeVar

__all__ = ["InProcess", "Returns", "SharedResults", "freeze", "hosted", "language", "memoised", "use"]

T = TypeVar("T")
Returns = Literal["value", "figure", "table"]


class SharedResults(Protocol):
    """Where memoised results live: the host's store, and the language of the session asking."""

    def language(self) -> str: ...

    def share(self, returns: Returns, key: tuple, compute: Callable[[], Any], heavy: bool, worker: bool) -> Any:
        """`compute()`'s result for `key`, computed once and shared; `heavy`: admit it through the heavy lane first;
        `worker`: `compute` pickles and may run in a worker process."""
        ...

    def holds(self, returns: Returns, key: tuple) -> bool: ...


class _NoHost:
    """No host: every call computes (a table's rows stay rows), in this process, in English."""

    def language(self) -> str:
        return "en"

    def share(self, returns: Returns, key: tuple, compute: Callable[[], Any], heavy: bool, worker: bool) -> Any:
        return compute()

    def holds(self, returns: Returns, key: tuple) -> bool:
        return False


class InProcess:
    """A host that keeps every result in a dict, in this process, for a viewer in `lang` (settable): a test's or a
    notebook's. Unbounded: for a few calls, not for a server."""

    def __init__(self, lang: str = "en") -> None:
        self.lang = lang
        self.results: dict[tuple, Any] = {}

    def language(self) -> str:
        return self.lang

    def share(self, returns: Returns, key: tuple, compute: Callable[[], Any], heavy: bool, worker: bool) -> Any:
        if key not in self.results:
            self.results[key] = compute()
        return self.results[key]

    def holds(self, returns: Returns, key: tuple) -> bool:
        return key in self.results


_host: SharedResults = _NoHost()


def use(host: SharedResults | None) -> SharedResults:
    """Keep every memoised result in `host` from now on (the app calls this once, when its serving layer loads;
    None: no host). Returns the host it replaces, so a test can put it back."""
    global _host
    previous, _host = _host, host if host is not None else _NoHost()
    return previous


@contextmanager
def hosted(host: SharedResults) -> Iterator[SharedResults]:
    """Keep memoised results in `host` for the block, then put back the host it replaced (a test's own store)."""
    previous = use(host)
    try:
        yield host
    finally:
        use(previous)


def language() -> str:
    """The language of the viewer asking, as the host says ("en" without a host): a view model's words are in it."""
    return _host.language()


def _call_unwrapped(module: str, qualname: str, args: tuple, kwargs: dict) -> Any:
    """Call the function a memoised `module.qualname` wraps: what a worker process runs for a `worker=True` call
    (module-level, so it pickles by name; the worker imports `module`)."""
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target.__wrapped__(*args, **kwargs)


def freeze(value: Any) -> Hashable:
    """`value` as a hashable key whose equality is the value's: each leaf tagged with its type, floats by their
    bits (so -0.0 is not 0.0 and NaN is NaN), containers and dataclasses field by field."""
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, (str, bytes, int, type(None), enum.Enum)):  # bool is an int: the tag tells them apart
        return (type(value).__qualname__, value)
    if isinstance(value, (tuple, list)):
        if value and set(map(type, value)) == {float}:  # a row of numbers (softmax logits): their bits at C speed
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
    fn: Callable[..., T] | None = None,
    /,
    *,
    returns: Returns = "value",
    heavy: bool | Callable[..., bool] = False,
    words: bool = True,
    worker: bool = False,
) -> Callable[..., T]:
    """Decorate `fn` so that each distinct call is computed once per host and shared (see the module doc)."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        name = f"{fn.__module__}.{fn.__qualname__}"

        def key_of(args: tuple, kwargs: dict) -> tuple:
            return (name, _host.language() if words else None, freeze(args), freeze(kwargs))

        def computation(args: tuple, kwargs: dict) -> Callable[[], T]:
            if worker:  # by name, so that it pickles: the decorated function is what its module holds
                return functools.partial(_call_unwrapped, fn.__module__, fn.__qualname__, args, kwargs)
            return functools.partial(fn, *args, **kwargs)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> T:
            admit = heavy(*args, **kwargs) if callable(heavy) else heavy
            return _host.share(returns, key_of(args, kwargs), computation(args, kwargs), admit, worker)

        def cached(*args: Any, **kwargs: Any) -> bool:
            return _host.holds(returns, key_of(args, kwargs))

        call.cached = cached  # type: ignore[attr-defined]
        return call

    return decorate if fn is None else decorate(fn)
