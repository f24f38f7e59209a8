"""Follow-me rooms: what a presenter shows, published under a short code that students' sessions poll.

A room lives in the memory of one process (a replica). Behind the multi-replica proxy a room code routes like the
`mpviz_route` cookie it is made from (deploy/README.md, "Affinity and room codes"), so every follower of a room is
sent to the replica that holds it. This module is plain Python (no Streamlit): `view.follow` is the glue.

The contract:
- `open(preferred, owner)` gives the presenter session `owner` a room: `preferred` itself if it is free, already
  its own, or held by a session that is gone (a presenter who reloaded takes the room back, with its followers);
  otherwise `preferred-2`, `preferred-3`, … (a student who followed room K carries the cookie K too).
- `publish(code, owner, view)` stores the presenter's view; the version goes up only when the view changed, so a
  follower compares one integer per poll.
- `open(..., exact=CODE)` first tries to take `CODE` itself back (the code a presenter's URL carries after a
  reload), under the same rules.
- `poll(code, follower, alive)` is a follower's tick: the room, how long its presenter has been gone (0 while
  connected), and the follower counted as present; `audience(code)` is how many followers polled in the last
  `FOLLOWER_TTL_S` seconds (the presenter's live count).
- Bounded: at most `max_rooms` rooms; a room nobody published to or opened for `ttl_s` seconds is dropped, and
  when full the least recently active room makes way. Followers are forgotten `FOLLOWER_TTL_S` after their last poll.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

KEY = re.compile(r"[A-Za-z0-9_]{1,64}")  # the proxy's route key (deploy/nginx.conf.template)
CODE = re.compile(r"[A-Za-z0-9_]{1,64}(?:-[A-Za-z0-9_]{1,16})?")  # KEY or KEY-SUFFIX: routed by KEY alone
MAX_ROOMS = 512
ROOM_TTL_S = 4 * 3600.0  # a lesson, with room to spare
MAX_SUFFIX = 999
FOLLOWER_TTL_S = 5.0  # a follower polls every half second; one that stayed silent this long has left


def parse_code(raw: str) -> str:
    """A room code as typed in `?follow=`; ValueError unless it is one the proxy can route."""
    if not CODE.fullmatch(raw):
        raise ValueError(raw)
    return raw


def random_key() -> str:
    """A short room key for a presenter without a route cookie (one process: any code works)."""
    return secrets.token_hex(3)


def _frozen(mapping: Mapping | None) -> Mapping | None:
    return None if mapping is None else MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class RoomView:
    """What a follower should see: a lesson page, its URL state, and (on the attention lesson) the stepper's place.

    `query` holds the page's own URL keys and the run config (never the classroom keys: a follower keeps its own
    language and presenter setting); `stepper` is the stepper's {step, view, phase, head, el, key} or None.
    """

    page: str
    query: Mapping[str, str] = field(default_factory=dict)
    stepper: Mapping | None = None

    def __post_init__(self) -> None:  # read-only: a room's view is shared by every follower's thread
        object.__setattr__(self, "query", _frozen(self.query))
        object.__setattr__(self, "stepper", _frozen(self.stepper))

    def same_place(self, other: RoomView | None) -> bool:
        """Same page and URL state (the stepper may differ: that needs a go-to, not a new page run)."""
        return other is not None and self.page == other.page and dict(self.query) == dict(other.query)


@dataclass(frozen=True)
class Room:
    code: str
    owner: str  # the presenter's session id
    version: int = 0  # 0: opened, nothing published yet
    view: RoomView | None = None
    active_at: float = 0.0  # last open or publish (monotonic seconds)
    gone_since: float | None = None  # when a follower's poll first found the owner disconnected; None while connected


class RoomRegistry:
    """Thread-safe, bounded rooms of one process (see the module docstring for the contract)."""

    def __init__(
        self,
        max_rooms: int = MAX_ROOMS,
        ttl_s: float = ROOM_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_rooms = max_rooms
        self.ttl_s = ttl_s
        self._clock = clock
        self._rooms: dict[str, Room] = {}
        self._followers: dict[str, dict[str, float]] = {}  # room code → follower session → its last poll
        self._lock = threading.Lock()

    def open(
        self, preferred: str, owner: str, alive: Callable[[str], bool] = lambda _: True, exact: str | None = None
    ) -> str:
        """The code of `owner`'s room, opened now under `exact` (a code this presenter held before a reload), else
        under `preferred` or the first free `preferred-N`.

        `alive(session_id)` says whether another room's owner is still connected; a gone owner's room is taken
        over (its followers stay). Raises ValueError for a `preferred` that is not a route key.
        """
        if not KEY.fullmatch(preferred):
            raise ValueError(preferred)
        suffixed = (preferred if n == 1 else f"{preferred}-{n}" for n in range(1, MAX_SUFFIX + 1))
        with self._lock:
            now = self._clock()
            self._expire(now)
            for code in (*([exact] if exact and CODE.fullmatch(exact) else []), *suffixed):
                room = self._rooms.get(code)
                if room is None or room.owner == owner or not alive(room.owner):
                    if room is None:
                        self._make_space()
                        room = Room(code, owner)
                    self._rooms[code] = replace(room, owner=owner, active_at=now, gone_since=None)
                    return code
            raise RuntimeError(f"no free room code under {preferred!r}")

    def publish(self, code: str, owner: str, view: RoomView) -> int:
        """Store `owner`'s current view; returns the room's version (unchanged when the view is). A room that
        expired meanwhile is opened again under the same code if that is free; -1 if another session holds it."""
        with self._lock:
            now = self._clock()
            room = self._rooms.get(code)
            if room is None:
                self._make_space()
                room = Room(code, owner)
            elif room.owner != owner:
                return -1
            if room.view != view:
                room = replace(room, version=room.version + 1, view=view)
            self._rooms[code] = replace(room, active_at=now)
            return room.version

    def get(self, code: str) -> Room | None:
        """The room's current state (an immutable snapshot), or None. Cheap: followers call it every poll."""
        with self._lock:
            return self._rooms.get(code)

    def poll(self, code: str, follower: str, alive: Callable[[str], bool]) -> tuple[Room | None, float]:
        """A follower's tick: (the room or None, seconds its owner has been disconnected, 0 while connected); the
        follower counts as present for `FOLLOWER_TTL_S`. Cheap: one look-up and one `alive` call."""
        with self._lock:
            room = self._rooms.get(code)
            if room is None:
                return None, 0.0
            now = self._clock()
            self._followers.setdefault(code, {})[follower] = now
            self._forget(code, now)  # a class is tens of followers: this scan costs microseconds
            if alive(room.owner):
                if room.gone_since is not None:
                    room = self._rooms[code] = replace(room, gone_since=None)
                return room, 0.0
            if room.gone_since is None:
                room = self._rooms[code] = replace(room, gone_since=now)
            return room, now - room.gone_since

    def audience(self, code: str) -> int:
        """How many followers polled room `code` in the last `FOLLOWER_TTL_S` seconds."""
        with self._lock:
            now = self._clock()
            self._forget(code, now)
            return len(self._followers.get(code, {}))

    def _forget(self, code: str, now: float) -> None:
        if (seen := self._followers.get(code)) is not None:
            for follower in [f for f, t in seen.items() if now - t > FOLLOWER_TTL_S]:
                del seen[follower]
            if not seen:
                del self._followers[code]

    def close(self, code: str, owner: str) -> None:
        """The presenter stopped presenting: the room goes (followers stay where they are)."""
        with self._lock:
            if (room := self._rooms.get(code)) is not None and room.owner == owner:
                del self._rooms[code]
                self._followers.pop(code, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._rooms)

    def _expire(self, now: float) -> None:
        for code in [c for c, r in self._rooms.items() if now - r.active_at > self.ttl_s]:
            del self._rooms[code]
            self._followers.pop(code, None)

    def _make_space(self) -> None:
        self._expire(self._clock())
        while len(self._rooms) >= self.max_rooms:
            code = min(self._rooms, key=lambda c: self._rooms[c].active_at)
            del self._rooms[code]
            self._followers.pop(code, None)


ROOMS = RoomRegistry()  # this process's rooms
