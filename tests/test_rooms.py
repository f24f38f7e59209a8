"""Follow-me rooms (view/rooms.py): codes the proxy can route, owners, takeover, versions, bounds, threads."""

import threading

import pytest

from view.rooms import CODE, RoomRegistry, RoomView, parse_code, random_key


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_codes_are_what_the_proxy_routes():
    assert parse_code("9f3a1c2b") == "9f3a1c2b" and parse_code("K_1-2") == "K_1-2"
    for bad in ("", "-2", "a-", "a b", "a/b", "x` [link](https://e.x)", "a-b-c", "a" * 65, "a-" + "b" * 17):
        with pytest.raises(ValueError):
            parse_code(bad)
    assert CODE.fullmatch(random_key())
    with pytest.raises(ValueError):
        RoomRegistry().open("K-2", "s1")  # a room is opened under a route key; the suffix is the registry's


def test_a_taken_code_gets_a_suffix_an_owner_keeps_its_room_and_a_gone_owner_is_replaced():
    rooms = RoomRegistry()
    alive = {"teacher": True, "student": True}
    assert rooms.open("K", "teacher", alive.get) == "K"
    assert rooms.open("K", "teacher", alive.get) == "K"  # the presenter's every run: the same room
    assert rooms.open("K", "student", alive.get) == "K-2"  # a follower of K (cookie K) who presents too
    rooms.publish("K", "teacher", RoomView("attention", {"dtype": "fp16"}))
    alive["teacher"] = False  # the presenter reloaded: a new session, the old one is gone
    assert rooms.open("K", "teacher-reloaded", alive.get) == "K"
    room = rooms.get("K")
    assert room.owner == "teacher-reloaded" and room.version == 1 and room.view.page == "attention"  # kept


def test_the_version_moves_only_when_the_view_changes():
    rooms = RoomRegistry()
    code = rooms.open("K", "t")
    assert rooms.get(code).version == 0 and rooms.get(code).view is None
    view = RoomView("attention", {"dtype": "bf16"}, {"step": 3, "view": "story"})
    assert rooms.publish(code, "t", view) == 1
    assert rooms.publish(code, "t", RoomView("attention", {"dtype": "bf16"}, {"step": 3, "view": "story"})) == 1
    assert rooms.publish(code, "t", RoomView("attention", {"dtype": "bf16"}, {"step": 4, "view": "story"})) == 2
    assert rooms.publish(code, "intruder", RoomView("formats")) == -1  # only the owner publishes
    assert rooms.get(code).view.stepper["step"] == 4
    with pytest.raises(TypeError):
        rooms.get(code).view.query["dtype"] = "fp16"  # shared by every follower's thread: read-only
    assert view.same_place(RoomView("attention", {"dtype": "bf16"}, {"step": 9}))
    assert not view.same_place(RoomView("attention", {"dtype": "fp16"})) and not view.same_place(None)
    rooms.close(code, "intruder")
    assert rooms.get(code) is not None
    rooms.close(code, "t")
    assert rooms.get(code) is None


def test_rooms_expire_and_are_bounded():
    clock = Clock()
    rooms = RoomRegistry(max_rooms=3, ttl_s=100, clock=clock)
    for k in range(3):
        clock.now = k
        rooms.open(f"R{k}", f"s{k}")
    clock.now = 10
    rooms.publish("R0", "s0", RoomView("policy"))  # R0 active again: R1 is now the least recently active
    rooms.open("R3", "s3")
    assert len(rooms) == 3 and rooms.get("R1") is None and rooms.get("R0") is not None
    clock.now = 200  # everyone idle for longer than the TTL
    rooms.open("R4", "s4")
    assert len(rooms) == 1 and rooms.get("R4") is not None
    assert rooms.publish("R0", "s0", RoomView("policy")) == 1  # an expired room comes back on its next publish


def test_threads_publishing_and_polling_at_once():
    rooms = RoomRegistry()
    code = rooms.open("K", "t")
    seen = []

    def presenter():
        for step in range(500):
            rooms.publish(code, "t", RoomView("attention", {}, {"step": step}))

    def follower():
        for _ in range(500):
            room = rooms.get(code)
            seen.append((room.version, room.view.stepper["step"] if room.view else -1))

    threads = [threading.Thread(target=presenter), *(threading.Thread(target=follower) for _ in range(4))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rooms.get(code).version == 500
    assert all(version == step + 1 for version, step in seen if version)  # a snapshot is never torn


def test_a_reloaded_presenter_takes_its_exact_code_back_even_with_a_suffix():
    rooms = RoomRegistry()
    alive = {"a": True, "b": True}
    assert rooms.open("K", "a", alive.get) == "K"
    assert rooms.open("K", "b", alive.get) == "K-2"
    rooms.publish("K-2", "b", RoomView("formats"))
    alive |= {"b": False, "b2": True}  # b reloaded: its URL says room=K-2
    assert rooms.open("K", "b2", alive.get, exact="K-2") == "K-2" and rooms.get("K-2").version == 1
    assert rooms.open("K", "c", alive.get, exact="K") == "K-3"  # K's presenter is connected: not taken
    assert rooms.open("Z", "d", alive.get, exact="bad code") == "Z"  # a malformed code is ignored


def test_a_poll_says_how_long_the_presenter_has_been_gone_and_counts_the_followers():
    clock = Clock()
    rooms = RoomRegistry(clock=clock)
    alive = {"t": True}
    code = rooms.open("K", "t", alive.get)
    assert rooms.poll("nowhere", "f0", alive.get) == (None, 0.0)
    for f in ("f1", "f2", "f3"):
        room, gone = rooms.poll(code, f, alive.get)
        assert room.code == code and gone == 0.0
    assert rooms.audience(code) == 3
    alive["t"] = False
    clock.now = 1.0
    assert rooms.poll(code, "f1", alive.get)[1] == 0.0  # first seen gone now
    clock.now = 12.0
    assert rooms.poll(code, "f1", alive.get)[1] == 11.0
    assert rooms.audience(code) == 1  # f2 and f3 stopped polling more than FOLLOWER_TTL_S ago
    rooms.open(code, "t2", alive.get, exact=code)  # the presenter is back
    alive["t2"] = True
    assert rooms.poll(code, "f1", alive.get)[1] == 0.0
