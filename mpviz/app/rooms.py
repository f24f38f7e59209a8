"""Follow-me rooms: what a presenter shows, published under a short code that students' sessions poll.

A room lives in the memory of one process (a replica). Behind the multi-replica proxy a room code routes like the
`mpviz_route` cookie it is made from (deploy/README.md, "Affinity and room codes"), so every follower of a room is
sent to the replica that holds it. This module is plain Python (no Streamlit): `mpviz.app.follow` is the glue.

Who presents is a secret, not a session or a code: a room belongs to the holder of its presenter key (at least 128
random bits that only the presenter's browser keeps, mpviz/app/follow.py); the registry stores only its SHA-256. A code
is public (it is on the projector): knowing it lets one follow, never present.

The contract:
- `open(key, session, client, preferred)` gives the holder of `key` a new room: `preferred` if it is free, else
  `preferred-2`, `preferred-3`, … A client (an address, see mpviz/app/client.py `client_id`; None: this machine itself,
  unbounded) holds at most `max_per_client` rooms at once (`RoomRefused`, reason "client"); when the registry is
  full, only a room whose presenter and followers have all been away for `ACTIVE_S` makes way, else `RoomRefused`
  (reason "full").
- `enter(key, session)` is the key's room, with `session` counted among its presenters (a reload, a new tab, a page
  change in the presenter's own browser), or None: the room ended (the presenter is told so, mpviz/app/follow.py).
- `publish(code, key, view)` stores the presenter's view; the version goes up only when the view changed, so a
  follower compares one integer per poll; -1 if the room ended or `key` does not hold it.
- `poll(code, follower, client, alive)` is a follower's tick (`Lookup`): the room, how long every presenter
  session of it has been disconnected, and, for a client that tried too many codes that lead nowhere, how long it
  must wait (`LookupLimiter`). A poll counts the follower as present for `FOLLOWER_TTL_S` and keeps the room active.
- A room whose presenter sessions have all been disconnected for `DEPARTED_S` ends (followers polling it do not
  keep it: a class cannot be handed to whoever presents next). A connected presenter's room stays.
- `hand_over(key)` makes a one-time token that `redeem` turns into the key, once, within `HANDOVER_S`: how a
  presenter moves to another device.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

__all__ = [
    "CODE",
    "KEY",
    "PRESENTER_KEY",
    "ROOMS",
    "Lookup",
    "LookupLimiter",
    "Room",
    "RoomRefused",
    "RoomRegistry",
    "RoomView",
    "new_presenter_key",
    "parse_code",
    "random_key",
]

KEY = re.compile(r"[A-Za-z0-9_]{1,64}")  # the proxy's route key (deploy/nginx.conf.template)
CODE = re.compile(r"[A-Za-z0-9_]{1,64}(?:-[A-Za-z0-9_]{1,16})?")  # KEY or KEY-SUFFIX: routed by KEY alone
PRESENTER_KEY = re.compile(r"[A-Za-z0-9_-]{22,128}")  # urlsafe base64 of at least 128 bits
PRESENTER_KEY_BYTES = 32  # 256 random bits
MAX_ROOMS = 512
MAX_ROOMS_PER_CLIENT = 8  # a school behind one address may have a few presenters; a flood from it may not
DEPARTED_S = 10 * 60.0  # every presenter session disconnected this long: the room ends (within 15 min, swept 1/s)
ACTIVE_S = 5 * 60.0  # a room whose presenter or a follower was seen this recently is never evicted
MAX_SUFFIX = 999
FOLLOWER_TTL_S = 5.0  # a follower polls every half second; one that stayed silent this long has left
HANDOVER_S = 10 * 60.0
SWEEP_EVERY_S = 1.0  # departed and idle rooms are looked for at most this often (polls arrive ~75 times a second)
CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read off a projector, typed on a phone
CODE_LENGTH = 6  # 31^6 ≈ 2^29.7 codes; with LookupLimiter a guesser finds a room of 512 in years, not minutes
WRONG_CODES = 30  # codes that lead nowhere one client may try per window (a class's typos fit) …
WRONG_WINDOW_S = 600.0  # … so a guess costs a client WRONG_WINDOW_S / WRONG_CODES = 20 s, sustained
MAX_CLIENTS = 4096  # the limiter remembers this many clients (least recently seen forgotten first)


def parse_code(raw: str) -> str:
    """A room code as typed in `?follow=`; ValueError unless it is one the proxy can route."""
    if not CODE.fullmatch(raw):
        raise ValueError(raw)
    return raw


def random_key() -> str:
    """A short room code for a presenter without a route cookie (one process: any code works), easy to type."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_presenter_key() -> str:
    """A fresh presenter key: 256 random bits, urlsafe base64 (what the presenter's browser keeps)."""
    return secrets.token_urlsafe(PRESENTER_KEY_BYTES)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


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
    digest: bytes = field(repr=False)  # SHA-256 of the presenter key: the key itself is never stored
    client: str | None = None  # who opened it (MAX_ROOMS_PER_CLIENT)
    presenters: frozenset[str] = frozenset()  # session ids that showed the key (a reload, a tab, another device)
    version: int = 0  # 0: opened, nothing published yet
    view: RoomView | None = None
    active_at: float = 0.0  # last open, publish or follower poll (monotonic seconds)
    gone_since: float | None = None  # since when no presenter session is connected; None while one is

    def held_by(self, key: str) -> bool:
        return hmac.compare_digest(self.digest, _digest(key))


@dataclass(frozen=True)
class Lookup:
    """A follower's poll: the room (None: no such room, or `wait_s` > 0), seconds every presenter session has been
    disconnected (0 while one is connected), seconds this client must wait before trying another code."""

    room: Room | None
    gone_s: float = 0.0
    wait_s: float = 0.0


class RoomRefused(RuntimeError):
    """No room for this presenter now: `reason` is "client" (this client holds MAX_ROOMS_PER_CLIENT) or "full"
    (every room is in use)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LookupLimiter:
    """Codes that lead nowhere, per client: `WRONG_CODES` distinct ones per `WRONG_WINDOW_S`; past that, every code
    the client has not already found waits (a room that exists and one that does not look the same to a guesser).
    A code the client found stays free to poll. Not thread-safe: the registry calls it under its lock."""

    def __init__(
        self, wrong_codes: int = WRONG_CODES, window_s: float = WRONG_WINDOW_S, max_clients: int = MAX_CLIENTS
    ) -> None:
        self.wrong_codes, self.window_s, self.max_clients = wrong_codes, window_s, max_clients
        self._clients: OrderedDict[str, tuple[dict[str, float], dict[str, float]]] = OrderedDict()  # found, wrong

    def check(self, client: str, code: str, exists: bool, now: float) -> float:
        """0 if `client` may look `code` up now (and it is recorded), else the seconds until it may."""
        found, wrong = self._clients.pop(client, None) or ({}, {})
        self._clients[client] = (found, wrong)  # most recently seen last
        while len(self._clients) > self.max_clients:
            self._clients.popitem(last=False)
        for seen in (found, wrong):
            for c in [c for c, t in seen.items() if now - t > self.window_s]:
                del seen[c]
        if exists and code in found:
            found[code] = now
            return 0.0
        if code in wrong and not exists:
            wrong[code] = now  # the same wrong code again (a follower waiting for its presenter): not a new guess
            return 0.0
        if len(wrong) >= self.wrong_codes:
            return max(0.0, min(wrong.values()) + self.window_s - now)
        (found if exists else wrong)[code] = now
        return 0.0


class RoomRegistry:
    """Thread-safe, bounded rooms of one process (see the module docstring for the contract)."""

    def __init__(
        self,
        max_rooms: int = MAX_ROOMS,
        clock: Callable[[], float] = time.monotonic,
        max_per_client: int = MAX_ROOMS_PER_CLIENT,
        limiter: LookupLimiter | None = None,
    ) -> None:
        self.max_rooms, self.max_per_client = max_rooms, max_per_client
        self._clock = clock
        self._limiter = limiter or LookupLimiter()
        self._rooms: dict[str, Room] = {}
        self._by_digest: dict[bytes, str] = {}  # presenter key digest → its room's code
        self._followers: dict[str, dict[str, float]] = {}  # room code → follower session → its last poll
        self._handovers: dict[str, tuple[str, float]] = {}  # one-time token → (presenter key, made at)
        self._swept_at = float("-inf")
        self._lock = threading.Lock()

    # ── presenter ─────────────────────────────────────────────────────────────────────────────────────────
    def open(
        self,
        key: str,
        session: str,
        client: str | None,
        preferred: str,
        alive: Callable[[str], bool] = lambda _: True,
    ) -> str:
        """The code of a new room held by `key` (or of the room it already holds), under `preferred` or the first
        free `preferred-N`. Raises ValueError for a malformed key or `preferred`, `RoomRefused` when this client
        holds too many rooms or every room is in use."""
        if not PRESENTER_KEY.fullmatch(key) or not KEY.fullmatch(preferred):
            raise ValueError(preferred)
        digest = _digest(key)
        with self._lock:
            now = self._clock()
            self._sweep(now, alive, force=True)
            if (code := self._by_digest.get(digest)) is not None:
                return self._enter(code, session, now).code
            if client is not None and sum(r.client == client for r in self._rooms.values()) >= self.max_per_client:
                raise RoomRefused("client")
            self._make_space(now, alive)
            for code in (preferred if n == 1 else f"{preferred}-{n}" for n in range(1, MAX_SUFFIX + 1)):
                if code not in self._rooms:
                    self._rooms[code] = Room(code, digest, client, frozenset({session}), active_at=now)
                    self._by_digest[digest] = code
                    return code
            raise RoomRefused("full")

    def enter(self, key: str, session: str) -> Room | None:
        """The room `key` holds, with `session` now one of its presenters; None if it holds none (it ended)."""
        if not PRESENTER_KEY.fullmatch(key):
            return None
        with self._lock:
            code = self._by_digest.get(_digest(key))
            return None if code is None else self._enter(code, session, self._clock())

    def _enter(self, code: str, session: str, now: float) -> Room:
        room = self._rooms[code]
        room = self._rooms[code] = replace(room, presenters=room.presenters | {session}, active_at=now, gone_since=None)
        return room

    def publish(self, code: str, key: str, view: RoomView) -> int:
        """Store the view of `key`'s room `code`; returns its version (unchanged when the view is), or -1 if that
        room ended or `key` does not hold it."""
        with self._lock:
            room = self._rooms.get(code)
            if room is None or not room.held_by(key):
                return -1
            if room.view != view:
                room = replace(room, version=room.version + 1, view=view)
            self._rooms[code] = replace(room, active_at=self._clock())
            return room.version

    def close(self, code: str, key: str) -> None:
        """The presenter stopped presenting: the room goes (followers stay where they are)."""
        with self._lock:
            if (room := self._rooms.get(code)) is not None and room.held_by(key):
                self._drop(code)

    def hand_over(self, key: str) -> str:
        """A one-time token that `redeem` turns into `key` within HANDOVER_S (to present from another device)."""
        token = secrets.token_urlsafe(16)
        with self._lock:
            now = self._clock()
            for t in [t for t, (_, made) in self._handovers.items() if now - made > HANDOVER_S]:
                del self._handovers[t]
            while len(self._handovers) >= self.max_rooms:
                del self._handovers[next(iter(self._handovers))]
            self._handovers[token] = (key, now)
        return token

    def redeem(self, token: str) -> str | None:
        """The presenter key a hand-over token stands for, once; None if unknown, used or older than HANDOVER_S."""
        with self._lock:
            key, made = self._handovers.pop(token, (None, 0.0))
            return key if key is not None and self._clock() - made <= HANDOVER_S else None

    # ── follower ──────────────────────────────────────────────────────────────────────────────────────────
    def get(self, code: str) -> Room | None:
        """The room's current state (an immutable snapshot), or None."""
        with self._lock:
            return self._rooms.get(code)

    def poll(self, code: str, follower: str, client: str | None, alive: Callable[[str], bool]) -> Lookup:
        """A follower's tick (see `Lookup`); the follower counts as present for `FOLLOWER_TTL_S`, and the room as
        active. Cheap: one look-up, one limiter check, one `alive` call per presenter session."""
        with self._lock:
            now = self._clock()
            self._sweep(now, alive)
            room = self._rooms.get(code)
            if client is not None and (wait := self._limiter.check(client, code, room is not None, now)) > 0:
                return Lookup(None, wait_s=wait)
            if room is None:
                return Lookup(None)
            self._followers.setdefault(code, {})[follower] = now
            self._forget(code, now)  # a class is tens of followers: this scan costs microseconds
            connected = any(alive(s) for s in room.presenters)
            gone_since = None if connected else (now if room.gone_since is None else room.gone_since)
            room = self._rooms[code] = replace(room, active_at=now, gone_since=gone_since)
            return Lookup(room, 0.0 if gone_since is None else now - gone_since)

    def audience(self, code: str) -> int:
        """How many followers polled room `code` in the last `FOLLOWER_TTL_S` seconds."""
        with self._lock:
            self._forget(code, self._clock())
            return len(self._followers.get(code, {}))

    def _forget(self, code: str, now: float) -> None:
        if (seen := self._followers.get(code)) is not None:
            for follower in [f for f, t in seen.items() if now - t > FOLLOWER_TTL_S]:
                del seen[follower]
            if not seen:
                del self._followers[code]

    def __len__(self) -> int:
        with self._lock:
            return len(self._rooms)

    # ── bounds ────────────────────────────────────────────────────────────────────────────────────────────
    def _drop(self, code: str) -> None:
        room = self._rooms.pop(code)
        self._by_digest.pop(room.digest, None)
        self._followers.pop(code, None)

    def _sweep(self, now: float, alive: Callable[[str], bool], *, force: bool = False) -> None:
        """End rooms whose presenter sessions all departed DEPARTED_S ago (at most once a SWEEP_EVERY_S unless
        `force`); note when a room's presenter sessions were all first seen gone."""
        if not force and now - self._swept_at < SWEEP_EVERY_S:
            return
        self._swept_at = now
        for code, room in list(self._rooms.items()):
            live = frozenset(s for s in room.presenters if alive(s))
            if live:
                if live != room.presenters or room.gone_since is not None:
                    self._rooms[code] = replace(room, presenters=live, gone_since=None)
                continue
            if room.gone_since is None:
                self._rooms[code] = replace(room, gone_since=now)
            elif now - room.gone_since > DEPARTED_S:
                self._drop(code)

    def _make_space(self, now: float, alive: Callable[[str], bool]) -> None:
        """Room for one more: the least recently active room that nobody presents or follows any more makes way;
        a room in use never does (RoomRefused "full" instead)."""
        while len(self._rooms) >= self.max_rooms:
            idle = [
                r
                for r in self._rooms.values()
                if now - r.active_at > ACTIVE_S and not any(alive(s) for s in r.presenters)
            ]
            if not idle:
                raise RoomRefused("full")
            self._drop(min(idle, key=lambda r: r.active_at).code)


ROOMS = RoomRegistry()  # this process's rooms
