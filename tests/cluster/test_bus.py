"""The bus contract, on each implementation (in-process and NATS): request/reply to one
owner, publish/subscribe with NATS wildcards, errors that say what went wrong."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.cluster.conftest import MakeBus
from tests.patience import PATIENCE, eventually

from meeple.bus import (
    BusTimeout,
    Namespace,
    NoResponder,
    RemoteError,
    matches,
)
from meeple.bus.subjects import edge_of


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> Namespace:
    return Namespace(f"b{abs(hash(request.node.nodeid)) % 10**8}")


async def _echo(payload: bytes) -> bytes:
    return b"got " + payload


async def test_a_command_reaches_the_owner_and_its_answer_comes_back(
    make_bus: MakeBus, ns: Namespace
) -> None:
    """A request on a room's command subject is answered by the one serving it."""
    owner, edge = await make_bus(), await make_bus()
    await owner.serve(ns.room_command("r1"), _echo)
    await owner.flush()
    assert await edge.request(ns.room_command("r1"), b"PLAY", timeout=2) == b"got PLAY"


async def test_no_owner_is_told_at_once(make_bus: MakeBus, ns: Namespace) -> None:
    """Nobody serves the subject (never, or no longer): NoResponder, not a timeout."""
    owner, edge = await make_bus(), await make_bus()
    with pytest.raises(NoResponder):
        await edge.request(ns.room_command("r1"), b"x", timeout=2)
    sub = await owner.serve(ns.room_command("r1"), _echo)
    await owner.flush()
    assert await edge.request(ns.room_command("r1"), b"x", timeout=2) == b"got x"
    await sub.close()
    await owner.flush()
    with pytest.raises(NoResponder):
        await edge.request(ns.room_command("r1"), b"x", timeout=2)


async def test_a_slow_owner_times_out_and_a_failing_one_says_why(
    make_bus: MakeBus, ns: Namespace
) -> None:
    """A handler that does not answer in time: BusTimeout; one that raises: RemoteError
    with its message."""
    owner, edge = await make_bus(), await make_bus()
    release = asyncio.Event()

    async def slow(payload: bytes) -> bytes:
        await release.wait()
        return payload

    async def failing(payload: bytes) -> bytes:
        raise ValueError("not your turn")

    await owner.serve(ns.room_command("slow"), slow)
    await owner.serve(ns.room_command("bad"), failing)
    await owner.flush()
    with pytest.raises(BusTimeout):
        await edge.request(ns.room_command("slow"), b"x", timeout=0.2)
    release.set()
    with pytest.raises(RemoteError, match="not your turn"):
        await edge.request(ns.room_command("bad"), b"x", timeout=2)


async def test_an_owner_handles_one_command_at_a_time(make_bus: MakeBus, ns: Namespace) -> None:
    """Concurrent requests to one responder are handled one after the other (a room's
    inbox), each answered."""
    owner, edge = await make_bus(), await make_bus()
    busy = 0
    most = 0

    async def handler(payload: bytes) -> bytes:
        nonlocal busy, most
        busy += 1
        most = max(most, busy)
        await asyncio.sleep(0.005)
        busy -= 1
        return payload

    await owner.serve(ns.room_command("r1"), handler)
    await owner.flush()
    answers = await asyncio.gather(
        *(edge.request(ns.room_command("r1"), str(i).encode(), timeout=5) for i in range(20))
    )
    assert answers == [str(i).encode() for i in range(20)]
    assert most == 1


async def test_a_queue_group_answers_each_request_once(make_bus: MakeBus, ns: Namespace) -> None:
    """Lobby standbys in one queue group: each request is handled by one of them."""
    a, b, edge = await make_bus(), await make_bus(), await make_bus()
    handled: list[str] = []

    def responder(name: str) -> Callable[[bytes], Awaitable[bytes]]:
        async def handle(payload: bytes) -> bytes:
            handled.append(name)
            return name.encode()

        return handle

    await a.serve(ns.lobby_request("sit"), responder("a"), queue="lobby")
    await b.serve(ns.lobby_request("sit"), responder("b"), queue="lobby")
    await a.flush()
    await b.flush()
    answers = [await edge.request(ns.lobby_request("sit"), b"", timeout=2) for _ in range(30)]
    assert len(handled) == 30
    assert [x.decode() for x in answers] == handled


async def test_seat_events_reach_their_subscribers_in_order(
    make_bus: MakeBus, ns: Namespace
) -> None:
    """A seat's subscriber hears its own seat only; the room's owner hears every seat
    through a wildcard; a spectator hears the view; all in publication order; a closed
    subscription hears nothing more."""
    owner, edge = await make_bus(), await make_bus()
    got: dict[str, list[tuple[str, bytes]]] = {"seat0": [], "all": [], "view": []}
    done = asyncio.Event()

    def into(key: str) -> Callable[[str, bytes], Awaitable[None]]:
        async def listen(subject: str, payload: bytes) -> None:
            got[key].append((subject, payload))
            if key == "view" and payload == b"end":
                done.set()

        return listen

    seat0 = await edge.subscribe(ns.seat("e1-1", "r1"), into("seat0"))
    await edge.subscribe(ns.edge_seats("e1"), into("all"))
    await edge.subscribe(ns.view("r1"), into("view"))
    await edge.flush()
    for i in range(50):
        await owner.publish(ns.seat(f"e1-{i % 2 + 1}", "r1"), str(i).encode())
    await owner.publish(ns.seat("e2-1", "r1"), b"another edge's seat")
    await owner.publish(ns.view("r1"), b"end")
    await asyncio.wait_for(done.wait(), PATIENCE)
    assert [p for _, p in got["seat0"]] == [str(i).encode() for i in range(0, 50, 2)]
    assert [p for _, p in got["all"]] == [str(i).encode() for i in range(50)]
    assert {s for s, _ in got["all"]} == {ns.seat("e1-1", "r1"), ns.seat("e1-2", "r1")}
    assert got["view"] == [(ns.view("r1"), b"end")]
    await seat0.close()
    await edge.flush()
    await owner.publish(ns.seat("e1-1", "r1"), b"after")
    await owner.publish(ns.view("r1"), b"end")
    await owner.flush()
    await eventually(
        lambda: len(got["view"]) == 2 and got["all"][-1][1] == b"after", "both heard", every=0.01
    )
    assert got["all"][-1][1] == b"after"
    assert [p for _, p in got["seat0"]][-1] == b"48"


def test_wildcards_match_as_nats_matches_them() -> None:
    """``*`` is one token, ``>`` one or more at the end."""
    assert matches("a.*.c", "a.b.c")
    assert not matches("a.*.c", "a.b.d.c")
    assert matches("a.>", "a.b.c")
    assert not matches("a.>", "a")
    assert not matches("a.b", "a.b.c")
    assert matches("a.b", "a.b")


def test_subject_names_refuse_tokens_that_would_escape() -> None:
    """A room uid or seat with a dot, a wildcard or a space is refused, so no subject can
    reach another room's."""
    ns = Namespace("meeple")
    assert ns.room_command("3fa9c2") == "meeple.room.3fa9c2.cmd._"
    assert ns.for_node("e1").room_command("3fa9c2") == "meeple.room.3fa9c2.cmd.e1"
    assert ns.for_node("e1").lobby_request("sit") == "meeple.lobby.req.sit.e1"
    assert ns.seat("e1-3", "3fa9c2") == "meeple.seat.e1.e1-3.3fa9c2"
    for bad in ("a.b", "*", ">", "a b", ""):
        with pytest.raises(ValueError, match="subject token"):
            ns.room_command(bad)
        with pytest.raises(ValueError, match="subject token"):
            ns.for_node(bad)
        with pytest.raises(ValueError, match="subject token"):
            ns.seat(bad, "r1")
    with pytest.raises(ValueError, match="namespace"):
        Namespace("Meeple.x")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20))
def test_any_text_is_a_subject_token_or_refused(text: str) -> None:
    """Whatever text becomes a seat's route, the subject built from it is one subject
    with exactly the namespace's tokens, under its own edge's seats and no other's, or
    the route is refused."""
    ns = Namespace("meeple")
    try:
        subject = ns.seat(text, "r1")
    except ValueError:
        bad = any(not (c.isascii() and (c.isalnum() or c in "_-")) for c in text)
        assert not text or bad or not edge_of(text)
        return
    edge = edge_of(text)
    assert subject.split(".") == ["meeple", "seat", edge, text, "r1"]
    assert matches(ns.edge_seats(edge), subject)
    assert matches(ns.seat_sources(text), subject)
    assert not matches(ns.edge_seats(edge + "x"), subject)
