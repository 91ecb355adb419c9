"""The bus contract, on each implementation (in-process and NATS): request/reply to one
owner, publish/subscribe with NATS wildcards, errors that say what went wrong."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import example, given, settings
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
from meeple.bus.base import Sealed, Subscription
from meeple.bus.local import LocalBus
from meeple.bus.schema import CODEC, OK, NamesLost, NameValue
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


# --- the local bus's shortcuts (issue 32.2, the seam's cost) --------------------------------

# Few subjects, so that one is published again after subscriptions came and went.
_TOKENS = st.sampled_from(["a", "b"])
_SUBJECTS = st.lists(_TOKENS, min_size=1, max_size=3).map(".".join)
_PATTERNS = st.lists(st.sampled_from(["a", "b", "*"]), min_size=1, max_size=3).flatmap(
    lambda tokens: st.sampled_from([".".join(tokens), ".".join([*tokens, ">"])])
)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("sub"), _PATTERNS),
        st.tuples(st.just("unsub"), st.integers(0, 20)),
        st.tuples(st.just("pub"), _SUBJECTS),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_OPS)
@example([("pub", "a.b"), ("sub", "a.*"), ("pub", "a.b"), ("unsub", 0), ("pub", "a.b")])
@example([("sub", "a.>"), ("pub", "a.b.a"), ("sub", "a.b.*"), ("pub", "a.b.a")])
def test_the_local_bus_hears_whoever_matches_now_whatever_it_matched_before(
    ops: list[tuple[str, object]],
) -> None:
    """Any sequence of subscriptions coming and going and publishes: each publish on the
    in-process bus reaches exactly the subscriptions whose pattern matches it now, though
    the bus remembers what each subject matched before."""

    async def run() -> None:
        bus = LocalBus()
        live: list[tuple[str, Subscription, list[str]]] = []
        for op, arg in ops:
            if op == "sub":
                assert isinstance(arg, str)
                got: list[str] = []
                sub = await bus.hear(arg, lambda s, _v, got=got: got.append(s), CODEC)
                live.append((arg, sub, got))
            elif op == "unsub" and live:
                assert isinstance(arg, int)
                _, sub, _ = live.pop(arg % len(live))
                await sub.close()
            elif op == "pub":
                assert isinstance(arg, str)
                for _, _, got in live:
                    got.clear()
                assert bus.post(arg, Sealed(NamesLost(), CODEC))
                for pattern, _, got in live:
                    assert got == ([arg] if matches(pattern, arg) else []), (pattern, arg)
        await bus.close()

    asyncio.run(run())


async def test_a_hearer_is_told_in_the_publisher_s_step_and_its_failure_stays_its_own() -> None:
    """A listener that hears at once (Bus.hear) has each message before post returns, in
    order; one that raises, or is handed a value not of its type, does not stop the
    publisher nor the other listeners."""
    bus = LocalBus()
    heard: list[object] = []
    other = NameValue(name="ann", holder="e1.1")

    def fails(_subject: str, _value: object) -> None:
        raise RuntimeError("a broken seat")

    await bus.hear("s.>", fails, CODEC)
    await bus.hear("s.*", lambda _s, v: heard.append(v), CODEC, NamesLost)
    await bus.hear("s.one", lambda _s, v: heard.append(v), CODEC)
    for n in range(3):
        assert bus.post("s.one", Sealed(NamesLost(names=[str(n)]), CODEC))
        await bus.publish("s.one", Sealed(NamesLost(names=[f"{n}!"]), CODEC))
        assert bus.post("s.one", Sealed(other, CODEC))  # not a NamesLost: s.* refuses it
    names = [v.names if isinstance(v, NamesLost) else v for v in heard]
    assert names == [x for n in range(3) for x in ([str(n)],) * 2 + ([f"{n}!"],) * 2 + (other,)]
    await bus.close()


async def test_an_inline_responder_answers_in_the_asker_s_step_and_says_why_it_failed() -> None:
    """A responder served inline runs in the requester's own step, several requests at
    once; a failure is the requester's RemoteError, a refused value too."""
    bus = LocalBus()
    running: list[asyncio.Task[object] | None] = []
    both = asyncio.Event()

    async def handler(_subject: str, value: object) -> bytes:
        running.append(asyncio.current_task())
        if len(running) == 2:
            both.set()
        await both.wait()  # two at once: neither waits for the other to finish
        if value.names:
            raise ValueError("no such seat")
        return OK

    await bus.answer("r.cmd.*", handler, CODEC, NamesLost, inline=True)
    one = asyncio.ensure_future(bus.request("r.cmd.e1", Sealed(NamesLost(), CODEC)))
    two = asyncio.ensure_future(bus.request("r.cmd.e1", Sealed(NamesLost(), CODEC)))
    assert await one == OK
    assert await two == OK
    assert running == [one, two]  # each in its asker's own task
    with pytest.raises(RemoteError, match="no such seat"):
        await bus.request("r.cmd.e1", Sealed(NamesLost(names=["x"]), CODEC))
    with pytest.raises(RemoteError, match="refused"):
        await bus.request("r.cmd.e1", Sealed(NameValue(name="a", holder="e1.1"), CODEC))
    await bus.close()
