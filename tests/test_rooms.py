"""Follow-me rooms (mpviz/app/rooms.py): codes the proxy can route, presenter keys, versions, bounds, floods, the
wrong-code limiter, hand-overs, threads; and the one list of personal URL keys that Python and the stepper share."""

import json
import re
import threading
from pathlib import Path

import pytest

from mpviz import contracts
from mpviz.app import rooms as rooms_module
from mpviz.app.page import PERSONAL_KEYS
from mpviz.app.rooms import (
    ACTIVE_S,
    CODE,
    DEPARTED_S,
    WRONG_CODES,
    WRONG_WINDOW_S,
    LookupLimiter,
    RoomRefused,
    RoomRegistry,
    RoomView,
    new_presenter_key,
    parse_code,
    random_key,
)
from mpviz.presentation.stepper_payload import BUILT_JS

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def always(_):
    return True


def test_codes_are_what_the_proxy_routes_and_easy_to_type():
    assert parse_code("9f3a1c2b") == "9f3a1c2b" and parse_code("K_1-2") == "K_1-2"
    for bad in ("", "-2", "a-", "a b", "a/b", "x` [link](https://e.x)", "a-b-c", "a" * 65, "a-" + "b" * 17):
        with pytest.raises(ValueError):
            parse_code(bad)
    codes = {random_key() for _ in range(200)}
    assert all(CODE.fullmatch(c) and re.fullmatch(r"[a-z2-9]{6}", c) for c in codes)
    assert not any(set(c) & set("01lio") for c in codes), "nothing to misread off a projector"
    with pytest.raises(ValueError):
        RoomRegistry().open(new_presenter_key(), "s1", None, "K-2")  # opened under a route key; suffixes are ours


def test_a_presenter_key_has_at_least_128_random_bits_and_only_its_digest_is_kept():
    keys = {new_presenter_key() for _ in range(100)}
    assert len(keys) == 100 and all(len(k) >= 43 for k in keys)  # 32 bytes, urlsafe base64
    rooms = RoomRegistry()
    key = new_presenter_key()
    code = rooms.open(key, "s", None, "K")
    assert key not in repr(rooms.get(code)) and key not in repr(vars(rooms))
    with pytest.raises(ValueError):
        rooms.open("short", "s", None, "Z")  # a guessable key is refused


def test_only_the_key_presents_a_room_whatever_the_session_cookie_or_code():
    rooms = RoomRegistry()
    teacher, student = new_presenter_key(), new_presenter_key()
    code = rooms.open(teacher, "teacher-tab", None, "K")
    assert rooms.publish(code, teacher, RoomView("attention", {"dtype": "fp16"})) == 1
    # a student who knows the code and routes like the teacher (cookie K) presents a room of their own
    assert rooms.open(student, "student", None, "K") == "K-2"
    assert rooms.publish(code, student, RoomView("formats", {"value": "6.66e-66"})) == -1
    assert rooms.enter(student, "student").code == "K-2" and rooms.enter("x" * 43, "nobody") is None
    # the teacher's reload, new tab or page change: another session, the same key, the same room and version
    assert rooms.enter(teacher, "teacher-reloaded").code == code
    assert rooms.get(code).version == 1 and rooms.get(code).view.page == "attention"
    assert rooms.open(teacher, "teacher-tab-2", None, "Z") == code  # a key holds one room
    rooms.close(code, student)
    assert rooms.get(code) is not None
    rooms.close(code, teacher)
    assert rooms.get(code) is None and rooms.enter(teacher, "t") is None  # ended: the presenter is told (follow.py)


def test_the_version_moves_only_when_the_view_changes():
    rooms = RoomRegistry()
    key = new_presenter_key()
    code = rooms.open(key, "t", None, "K")
    assert rooms.get(code).version == 0 and rooms.get(code).view is None
    view = RoomView("attention", {"dtype": "bf16"}, {"step": 3, "view": "story"})
    assert rooms.publish(code, key, view) == 1
    assert rooms.publish(code, key, RoomView("attention", {"dtype": "bf16"}, {"step": 3, "view": "story"})) == 1
    assert rooms.publish(code, key, RoomView("attention", {"dtype": "bf16"}, {"step": 4, "view": "story"})) == 2
    assert rooms.get(code).view.stepper["step"] == 4
    with pytest.raises(TypeError):
        rooms.get(code).view.query["dtype"] = "fp16"  # shared by every follower's thread: read-only
    assert view.same_place(RoomView("attention", {"dtype": "bf16"}, {"step": 9}))
    assert not view.same_place(RoomView("attention", {"dtype": "fp16"})) and not view.same_place(None)


def test_a_departed_presenters_room_ends_within_fifteen_minutes_and_a_connected_one_stays():
    clock = Clock()
    rooms = RoomRegistry(clock=clock)
    alive = {"t": True, "u": True}
    key, other = new_presenter_key(), new_presenter_key()
    code = rooms.open(key, "t", None, "K", alive.get)
    kept = rooms.open(other, "u", None, "L", alive.get)
    alive["t"] = False  # the teacher closed the laptop
    clock.now = 1.0
    assert rooms.poll(code, "f", None, alive.get).gone_s == 0.0  # first seen gone now
    clock.now = DEPARTED_S
    look = rooms.poll(code, "f", None, alive.get)
    assert look.room is not None and look.gone_s == DEPARTED_S - 1.0  # followers alone do not keep it forever
    clock.now = DEPARTED_S + 2.0
    assert rooms.poll(code, "f", None, alive.get).room is None and DEPARTED_S + 2.0 < 15 * 60
    assert rooms.publish(code, key, RoomView("policy")) == -1, "an ended room is not silently opened again"
    assert rooms.get(kept) is not None  # its presenter is connected


def test_a_flood_of_rooms_never_evicts_a_room_in_use():
    clock = Clock()
    rooms = RoomRegistry(max_rooms=64, clock=clock)
    alive: dict[str, bool] = {"teacher": True}
    teacher = new_presenter_key()
    code = rooms.open(teacher, "teacher", "10.0.0.1", "K", alive.get)
    rooms.publish(code, teacher, RoomView("attention"))
    # 520 presenter sessions from one client within 30 s: bounded per client
    opened, refused = 0, []
    for n in range(520):
        clock.now = n * 30 / 520
        alive[f"flood{n}"] = True
        try:
            rooms.open(new_presenter_key(), f"flood{n}", "10.6.6.6", "F", alive.get)
            opened += 1
        except RoomRefused as e:
            refused.append(e.reason)
    assert opened == rooms_module.MAX_ROOMS_PER_CLIENT and set(refused) == {"client"}
    # …and from 520 clients: the registry fills, then refuses; the teacher's room (connected) is never evicted
    for n in range(520):
        alive[f"bot{n}"] = True
        try:
            rooms.open(new_presenter_key(), f"bot{n}", f"10.7.{n // 256}.{n % 256}", "B", alive.get)
        except RoomRefused as e:
            assert e.reason == "full"
    assert len(rooms) == 64 and rooms.get(code).view.page == "attention"
    # a teacher gone (a reload that takes long) whose followers still poll keeps the room too
    alive["teacher"] = False
    for n in range(520):
        alive[f"bot{n}"] = alive[f"flood{n}"] = False  # the flood's sessions are gone: its rooms may make way
    for minute in range(1, 5):
        clock.now = 30 + 60 * minute
        assert rooms.poll(code, "student", None, alive.get).room is not None
        with pytest.raises(RoomRefused):  # the flood's rooms were in use minutes ago: none makes way yet
            rooms.open(new_presenter_key(), f"late{minute}", f"10.8.0.{minute}", "L", alive.get)
    clock.now += ACTIVE_S  # the flood's rooms have been idle longer than ACTIVE_S: they make way, not the teacher's
    rooms.poll(code, "student", None, alive.get)
    for n in range(63):
        rooms.open(new_presenter_key(), f"later{n}", f"10.9.0.{n}", "M", alive.get)
    assert rooms.get(code) is not None and rooms.enter(teacher, "teacher-back").code == code


def test_wrong_codes_are_limited_per_client_and_found_rooms_stay_free():
    clock = Clock()
    rooms = RoomRegistry(clock=clock)
    code = rooms.open(new_presenter_key(), "t", None, "K")
    for n in range(WRONG_CODES):
        assert rooms.poll(f"guess{n}", "g", "6.6.6.6", always).wait_s == 0.0
    for _ in range(10):  # a follower waiting for a room that is not open yet polls the same code: one guess
        assert rooms.poll("guess0", "g", "6.6.6.6", always).wait_s == 0.0
    blocked = rooms.poll(code, "g", "6.6.6.6", always)  # past the limit a real code looks like any other
    assert blocked.room is None and blocked.wait_s == WRONG_WINDOW_S
    assert rooms.poll(code, "s", "7.7.7.7", always).room is not None  # another client is not affected
    for _ in range(100):
        assert rooms.poll(code, "s", "7.7.7.7", always).room is not None  # polling a found room costs no guesses
    assert rooms.poll("nowhere", "local", None, always).wait_s == 0.0  # this machine itself is not limited
    clock.now = WRONG_WINDOW_S + 1
    assert rooms.poll(code, "g", "6.6.6.6", always).room is not None
    limiter = LookupLimiter(wrong_codes=2, window_s=10, max_clients=3)
    for n in range(10):
        limiter.check(f"c{n}", "x", False, 0.0)
    assert len(limiter._clients) == 3  # bounded memory


def test_a_hand_over_token_works_once_and_expires():
    clock = Clock()
    rooms = RoomRegistry(clock=clock)
    key = new_presenter_key()
    token = rooms.hand_over(key)
    assert len(token) >= 22 and token not in key
    assert rooms.redeem(token) == key and rooms.redeem(token) is None
    late = rooms.hand_over(key)
    clock.now = rooms_module.HANDOVER_S + 1
    assert rooms.redeem(late) is None and rooms.redeem("made-up") is None


def test_threads_publishing_and_polling_at_once():
    rooms = RoomRegistry()
    key = new_presenter_key()
    code = rooms.open(key, "t", None, "K")
    seen = []

    def presenter():
        for step in range(500):
            rooms.publish(code, key, RoomView("attention", {}, {"step": step}))

    def follower(n):
        for _ in range(500):
            room = rooms.poll(code, f"f{n}", None, always).room
            seen.append((room.version, room.view.stepper["step"] if room.view else -1))

    threads = [threading.Thread(target=presenter), *(threading.Thread(target=follower, args=(n,)) for n in range(4))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rooms.get(code).version == 500
    assert all(version == step + 1 for version, step in seen if version)  # a snapshot is never torn
    assert rooms.audience(code) == 4


def test_one_list_of_personal_url_keys_for_python_and_the_stepper():
    listed = contracts.load("personal_keys.json")  # mpviz/contracts/: the one list Python and the stepper read
    assert tuple(listed) == PERSONAL_KEYS and {"present", "room", "follow", "handover"} <= set(listed)
    place = (ROOT / "assets" / "components" / "stepper" / "place.js").read_text()
    assert 'from "../../../mpviz/contracts/personal_keys.json"' in place and "PERSONAL = PERSONAL_KEYS" in place
    assert not re.search(r"PERSONAL\s*=\s*\[", place), "no second list in the stepper"
    assert json.dumps(listed) in BUILT_JS.read_text()
