"""The CMPN402 referee kit: every check passes against meeple's referee, and each MUST
check fails against meeple's referee behind a relay that breaks its rule (issue 23: a
referee that scores a move sent after the game's end; one that loses one of two frames
that arrive together)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.check.broken import Mangler, assert_fail, ws_first_frame_only, ws_whole_frames_only

from meeple.check import run_server_kit, server_checks
from meeple.check.cmpn402 import ws_frame, ws_frame_parts, ws_units
from meeple.check.core import Level, Result, Status
from meeple.check.scrabble import best_move
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.cmpn402 import PassNotice
from meeple.server.app import MeepleServer
from meeple.server.config import Cmpn402Config, ServerConfig

PING = 0.5  # the referee's ping interval in these tests (default 1 s)


@pytest.fixture
async def referee(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only("cmpn402")
    config = replace(config, cmpn402=Cmpn402Config(ping_interval=PING, challenge_time=1.0))
    srv = MeepleServer(config, rng=random.Random(402))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()


async def _run(port: int, lexicon: Lexicon, only: list[str] | None = None) -> list[Result]:
    return await run_server_kit(
        "cmpn402",
        "127.0.0.1",
        port,
        lexicon=lexicon,
        wait=1.0,
        only=only or [],
        options={"ping_interval": PING},
    )


async def test_every_check_passes_against_meeple(referee: MeepleServer, gcide: Lexicon) -> None:
    results = await _run(referee.ports["cmpn402"], gcide)
    assert len(results) >= 25
    for r in results:
        assert r.status is Status.PASS, (r.check.id, r.status, r.detail)


def test_every_message_type_has_a_check() -> None:
    checks = server_checks("cmpn402")
    assert len({c.id for c in checks}) == len(checks)
    assert all(c.level in (Level.MUST, Level.SHOULD) and c.section for c in checks)
    text = " ".join(f"{c.section} {c.title}" for c in checks).upper().replace("-", "_")
    for word in [
        "NAME",
        "START",
        "PASS",
        "EXCHANGE",
        "PLAY",
        "NO_CHALLENGE",
        "CHALLENGE",
        "CHALLENGE_ACCEPTED",
        "CHALLENGE_REJECTED",
        "INVALID",
        "END",
    ]:
        assert word in text, word


def _payload(rewrite: Callable[[bytes], bytes | None]) -> Callable[[bytes], bytes]:
    """Rewrite the payload of each binary frame to the client (None drops the frame)."""

    def unit(data: bytes) -> bytes:
        parts = ws_frame_parts(data)
        if parts is None or parts[0] != 2:
            return data
        new = rewrite(parts[1])
        return b"" if new is None else ws_frame(2, new)

    return unit


def _as_text(data: bytes) -> bytes:
    parts = ws_frame_parts(data)
    if parts is None or parts[0] != 2:
        return data
    return ws_frame(1, parts[1])


def _kind(kind: int, rewrite: Callable[[bytes], bytes | None]) -> Callable[[bytes], bytes]:
    return _payload(lambda p: rewrite(p) if p[:1] == bytes((kind,)) else p)


def _int32(data: bytes, at: int, delta: int) -> bytes:
    value = int.from_bytes(data[at : at + 4], "big", signed=True) + delta
    return data[:at] + value.to_bytes(4, "big", signed=True) + data[at + 4 :]


def _close_normally(data: bytes) -> bytes:
    """A referee that turns a third agent away with close code 1000, not 1013 (ERRATA)."""
    parts = ws_frame_parts(data)
    if parts is None or parts[0] != 8 or parts[1][:2] != (1013).to_bytes(2, "big"):
        return data
    return ws_frame(8, (1000).to_bytes(2, "big") + parts[1][2:])


def _ignores(kind: int) -> Callable[[bytes], bytes]:
    """A referee that ignores every agent message of ``kind`` (its frames dropped)."""

    def chunk(data: bytes) -> bytes:
        units, rest = ws_units(data)
        if rest:
            return data
        kept = [u for u in units if (ws_frame_parts(u) or (0, b""))[1][:1] != bytes((kind,))]
        return b"".join(kept)

    return chunk


def _claims_one_less(data: bytes) -> bytes:
    """A referee that scores every word a point below the rules: meeple's referee behind
    a relay that lowers each PLAY's claimed score by one, so it answers the engine's
    legal PLAY, claimed at the rules' score, with INVALID (ERRATA: the claim is checked)."""
    units, rest = ws_units(data)
    if rest:
        return data
    out = []
    for u in units:
        parts = ws_frame_parts(u)
        if parts is not None and parts[0] == 2 and parts[1][:1] == b"\x04":
            u = ws_frame(2, _int32(parts[1], len(parts[1]) - 4, -1), mask=b"abcd")
        out.append(u)
    return b"".join(out)


Rewrite = Callable[[bytes], bytes] | None
BROKEN: dict[str, tuple[Rewrite, Rewrite, list[str]]] = {
    "text frames": (_as_text, None, ["binary"]),
    "NAME with a name in it": (_kind(0, lambda p: b"\x00ref"), None, ["name"]),
    "both agents first": (_kind(1, lambda p: p[:1] + b"\x01" + p[2:]), None, ["start"]),
    "no INVALID": (
        _kind(9, lambda p: None),
        None,
        ["exchange-invalid", "play-score", "play-invalid", "coalesced"],
    ),
    "the waiting player's clock runs": (
        _kind(2, lambda p: _int32(p, 1, -1500)),
        None,
        ["clocks"],
    ),
    "no challenge time in the echo": (
        _kind(4, lambda p: _int32(p, len(p) - 12, -_int(p, len(p) - 12))),
        None,
        ["play"],
    ),
    "NO_CHALLENGE without the new tiles": (
        _kind(5, lambda p: p[:1] + bytes(7) if len(p) == 8 else p),
        None,
        ["no-challenge", "challenge-timeout"],
    ),
    "CHALLENGE_ACCEPTED as REJECTED": (
        _kind(7, lambda p: b"\x08" + p[1:]),
        None,
        ["challenge-accepted"],
    ),
    "ENDs that disagree on the scores": (
        _kind(10, lambda p: _int32(p, 2, 1)),
        None,
        ["end"],
    ),
    # Two runs: after the first, the referee holds the dropped game to resume, and the
    # second check's set-up is refused (1013): could not test, no longer a FAIL.
    "no END on a disconnect": (
        _kind(10, lambda p: None if p[1:2] == b"\x02" else p),
        None,
        ["disconnect"],
    ),
    "no END on a heartbeat drop": (
        _kind(10, lambda p: None if p[1:2] == b"\x02" else p),
        None,
        ["heartbeat-drop"],
    ),
    "resumes with the scores reset": (
        _kind(1, lambda p: p[: 9 + 225] + bytes(8) + p[9 + 225 + 8 :]),
        None,
        ["resume"],
    ),
    "PASS told without the times": (
        _kind(2, lambda p: p[:1] + bytes(8) if len(p) == 9 else p),
        None,
        ["pass"],
    ),
    "refuses the engine's claimed scores": (None, _claims_one_less, ["game-plays"]),
    "ignores EXCHANGE": (None, _ignores(3), ["exchange"]),
    "ignores CHALLENGE": (None, _ignores(6), ["challenge-rejected"]),
    "a third agent closed with 1000": (_close_normally, None, ["third-connection"]),
    "loses one of two frames in one read (issue 23)": (None, ws_first_frame_only, ["coalesced"]),
    "reads whole frames only": (None, ws_whole_frames_only, ["split"]),
}


def _int(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 4], "big", signed=True)


# MUST checks whose broken referee is a test of its own (``_Referee``, below).
ELSEWHERE = {
    "late-move": "test_a_referee_that_scores_a_late_move_fails",
    "end-race": "test_a_play_behind_the_game_ending_no_challenge",
    "out-of-turn": "test_a_referee_that_takes_a_move_out_of_turn_fails",
    "heartbeat-ping": "test_a_referee_that_never_drops_a_silent_agent_fails",
}


def test_every_must_check_has_a_broken_server() -> None:
    """Issue 23: for each MUST rule a check covers, a broken referee proves it can fail."""
    broken = {i for _, _, ids in BROKEN.values() for i in ids}
    assert all(callable(globals().get(test)) for test in ELSEWHERE.values())
    broken |= set(ELSEWHERE)
    checks = server_checks("cmpn402")
    must = {c.id.removeprefix("cmpn402.server.") for c in checks if c.level is Level.MUST}
    assert must - broken == set()


@pytest.mark.parametrize("name", list(BROKEN))
async def test_a_broken_referee_fails_its_checks(
    name: str, referee: MeepleServer, gcide: Lexicon
) -> None:
    to_client, to_server, ids = BROKEN[name]
    async with Mangler(
        referee.ports["cmpn402"], b"", cut=ws_units, to_client=to_client, to_server=to_server
    ) as broken:
        results = await _run(broken.port, gcide, [f"cmpn402.server.{i}" for i in ids])
    assert_fail(results, "cmpn402.server.", ids)


class _Referee:
    """A relay to meeple's referee that answers every ping itself (so no agent is ever
    dropped), and, with ``late``, echoes a PLAY sent after END to the other agent (a
    referee that scores a move sent after the game's end, issue 23)."""

    def __init__(
        self,
        upstream: int,
        *,
        late: bool = False,
        pongs: bool = False,
        any_turn: bool = False,
        race: str | None = None,
    ) -> None:
        self.upstream, self.late, self.pongs = upstream, late, pongs
        # race: a PLAY that came in one read behind a NO_CHALLENGE is scored, "before" the
        # game's END (echoed to the other agent, both ENDs counting it: the course's
        # referee) or "after" it (echoed to the other agent behind its END).
        self.race = race
        self.raced: dict[asyncio.StreamWriter, bytes] = {}
        # any_turn: a PASS from the agent not on turn is told to the one on turn (a referee
        # that takes a move out of turn); the turn as the referee's START and PASS give it.
        self.any_turn = any_turn
        self.on_turn: asyncio.StreamWriter | None = None
        self.clients: list[asyncio.StreamWriter] = []
        self.ended: set[asyncio.StreamWriter] = set()
        self.port = 0
        self.tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> _Referee:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for t in list(self.tasks):
            t.cancel()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)  # type: ignore[arg-type]
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream)
        self.clients.append(writer)

        async def inbound() -> None:
            buffer = b""
            while chunk := await reader.read(65536):
                units, buffer = ws_units(buffer + chunk)
                payloads = [p[1] for p in map(ws_frame_parts, units) if p and p[0] == 2]
                for first, second in itertools.pairwise(payloads):
                    if self.race and first == b"\x05" and second[:1] == b"\x04":
                        self.raced[writer] = second  # before it goes up: END comes back
                for u in units:
                    parts = ws_frame_parts(u)
                    if parts is not None and self.pongs and parts[0] == 10:
                        continue  # the relay answered that ping already
                    if (
                        parts is not None
                        and self.late
                        and writer in self.ended
                        and parts[1][:1] == b"\x04"
                    ):
                        for other in self.clients:
                            if other is not writer:
                                echo = parts[1] + (1000).to_bytes(4, "big") + bytes(8)
                                other.write(ws_frame(2, echo))
                    if (
                        parts is not None
                        and self.any_turn
                        and parts[1] == b"\x02"
                        and self.on_turn not in (None, writer)
                    ):
                        assert self.on_turn is not None
                        self.on_turn.write(ws_frame(2, PassNotice(60_000, 120_000).encode()))
                    up_w.write(u)

        async def outbound() -> None:
            buffer = b""
            while chunk := await up_r.read(65536):
                units, buffer = ws_units(buffer + chunk)
                for u in units:
                    parts = ws_frame_parts(u)
                    if parts is not None and self.pongs and parts[0] == 9:
                        up_w.write(ws_frame(10, parts[1], mask=b"abcd"))
                        continue
                    if parts is not None and parts[1][:1] == b"\x0a":
                        self.ended.add(writer)
                        if self.raced:
                            self.write_race(writer, parts[1])
                            continue
                    if parts is not None and (
                        parts[1][:2] == b"\x01\x01" or parts[1][:1] == b"\x02"
                    ):
                        self.on_turn = writer  # START as the first, or told of a PASS
                    writer.write(u)

        try:
            await asyncio.wait(
                [asyncio.create_task(inbound()), asyncio.create_task(outbound())],
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            for w in (writer, up_w):
                with contextlib.suppress(Exception):
                    w.close()
            self.tasks.discard(task)  # type: ignore[arg-type]

    def write_race(self, writer: asyncio.StreamWriter, end: bytes) -> None:
        """END to ``writer`` with the raced PLAY scored before or after it."""
        racer, play = next(iter(self.raced.items()))
        score = _int(play, len(play) - 4)
        echo = ws_frame(2, play + (1000).to_bytes(4, "big") + bytes(8))
        if writer is racer:
            writer.write(ws_frame(2, _int32(end, 2, score) if self.race == "before" else end))
            return
        if self.race == "before":
            writer.write(echo)
            writer.write(ws_frame(2, _int32(end, 6, score)))
        else:
            writer.write(ws_frame(2, end))
            writer.write(echo)


async def test_a_referee_that_scores_a_late_move_fails(
    referee: MeepleServer, gcide: Lexicon
) -> None:
    async with _Referee(referee.ports["cmpn402"], late=True) as broken:
        results = await _run(broken.port, gcide, ["cmpn402.server.late-move"])
    assert results[0].status is Status.FAIL, results[0]


async def test_a_referee_that_takes_a_move_out_of_turn_fails(
    referee: MeepleServer, gcide: Lexicon
) -> None:
    """State: IDLE: a PASS from the agent not on turn changes nothing; a referee that
    tells the agent on turn of it fails ``out-of-turn``."""
    async with _Referee(referee.ports["cmpn402"], any_turn=True) as broken:
        results = await _run(broken.port, gcide, ["cmpn402.server.out-of-turn"])
    assert results[0].status is Status.FAIL, results[0]
    assert "the player on turn got" in results[0].detail, results[0].detail


async def test_a_referee_that_never_drops_a_silent_agent_fails(
    referee: MeepleServer, gcide: Lexicon
) -> None:
    async with _Referee(referee.ports["cmpn402"], pongs=True) as broken:
        results = await _run(
            broken.port, gcide, ["cmpn402.server.heartbeat-ping", "cmpn402.server.heartbeat-drop"]
        )
    assert [r.status for r in results] == [Status.FAIL, Status.FAIL], results


async def test_the_client_kit_does_not_grade_what_crossed_end() -> None:
    """The kit's agent drops (END reason 2) while the agent under test has a challenge
    window open: the agent, not having read END yet, answers NO_CHALLENGE and at once
    plays its own move (spec, AWAIT_AGENT_CHALLENGE → THINKING). Neither is out of turn
    (the misgrading of meeple's own agent under load); a move after that is."""
    from meeple.check.clients import Observations
    from meeple.check.cmpn402_client import _Cmpn402Proxy
    from meeple.protocols.cmpn402 import (
        EndMessage,
        EndReason,
        Name,
        NameRequest,
        NoChallenge,
        PlayMove,
        PlayNotice,
        Start,
    )

    proxy = _Cmpn402Proxy(Observations("cmpn402", 2), 0)
    proxy.refuse_next = False  # the kit's injected INVALID is another check's business
    board = tuple("." * 15 for _ in range(15))
    proxy.to_client(ws_frame(2, NameRequest().encode()), "paced")
    proxy.from_client(ws_frame(2, Name("Alice").encode()))
    for m in (
        Start(2, "ABCDEFG", board, 0, 0, 60_000, 120_000),
        PlayNotice(7, 7, 0, "CAT", 10, 5_000, 60_000, 120_000),
        EndMessage(EndReason.CONNECTION_ERROR, 0, 10),
    ):
        proxy.to_client(ws_frame(2, m.encode()), "paced")
    proxy.in_game = True  # the game waits to resume
    play = PlayMove(8, 7, 1, "DOG", 9)
    for m in (NoChallenge(), play):
        proxy.from_client(ws_frame(2, m.encode()))
    assert proxy.obs.out_of_turn == []
    # END closed the challenge window: neither owed an answer nor graded as unanswered.
    assert proxy.obs.skips_told == proxy.obs.skips_answered == 0
    proxy.from_client(ws_frame(2, play.encode()))  # a second PLAY: no state allows it
    assert len(proxy.obs.out_of_turn) == 1


# --- issue 31: the kit's false FAILs against the course's referee ----------------------


async def test_six_passes_without_an_end_differ_and_late_move_cannot_test(
    referee: MeepleServer, gcide: Lexicon
) -> None:
    """Issue 31: six scoreless turns ending the game is the ERRATA's rule only. A referee
    without it (its END 0 after six passes never sent) "differs" in ``end``, and
    ``late-move``, which ends its game so, could not test (it used to FAIL "no END")."""
    no_six_pass_end = _kind(10, lambda p: None if p[1:2] == b"\x00" else p)
    async with Mangler(
        referee.ports["cmpn402"], b"", cut=ws_units, to_client=no_six_pass_end
    ) as quirky:
        results = await _run(quirky.port, gcide, ["cmpn402.server.end", "late-move"])
    end, late = results
    assert end.status is Status.DIFFERS, end
    assert "six scoreless turns did not end the game" in end.detail, end.detail
    assert late.status is Status.COULD_NOT_TEST, late
    assert "ERRATA" in late.detail, late.detail
    assert "six scoreless" in late.detail, late.detail


async def test_an_end_reason_other_than_0_after_six_passes_differs(
    referee: MeepleServer, gcide: Lexicon
) -> None:
    """END reason 0 for six scoreless turns is the ERRATA's too: reason 1 "differs"."""
    reason_1 = _kind(10, lambda p: p[:1] + (b"\x01" if p[1:2] == b"\x00" else p[1:2]) + p[2:])
    async with Mangler(referee.ports["cmpn402"], b"", cut=ws_units, to_client=reason_1) as q:
        (end,) = await _run(q.port, gcide, ["cmpn402.server.end"])
    assert end.status is Status.DIFFERS, end
    assert "END reason [1]" in end.detail, end.detail


class _SlowToFreeSeats:
    """A referee that frees an agent's seat only ``hold`` s after its connection closed
    (the course's referee processes closes late) and, while two seats are taken, shakes
    hands with a new connection and closes it with 1013 ("try again later"), as the
    spec allows. Everything else is relayed to meeple's referee unchanged."""

    def __init__(self, upstream: int, hold: float) -> None:
        self.upstream, self.hold = upstream, hold
        self.seats = 0
        self.refused = 0
        self.port = 0
        self.tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> _SlowToFreeSeats:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for t in list(self.tasks):
            t.cancel()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)  # type: ignore[arg-type]
        try:
            if self.seats >= 2:
                await self.refuse(reader, writer)
                return
            self.seats += 1
            try:
                await self.relay(reader, writer)
            finally:
                asyncio.get_running_loop().call_later(self.hold, self.free)
        finally:
            self.tasks.discard(task)  # type: ignore[arg-type]

    def free(self) -> None:
        self.seats -= 1

    async def refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.refused += 1
        head = await reader.readuntil(b"\r\n\r\n")
        key = next(
            line.split(b":", 1)[1].strip()
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accept = base64.b64encode(
            hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()
        )
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )
        writer.write(ws_frame(8, (1013).to_bytes(2, "big") + b"try again later"))
        with contextlib.suppress(Exception):
            await writer.drain()
            await asyncio.wait_for(reader.read(65536), 1.0)  # the client's close
        writer.close()

    async def relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream)

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            while chunk := await r.read(65536):
                w.write(chunk)
            w.close()

        try:
            await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))
        except Exception:
            pass
        finally:
            for w in (writer, up_w):
                with contextlib.suppress(Exception):
                    w.close()


async def test_a_referee_that_frees_seats_late_is_retried_not_failed(
    referee: MeepleServer, gcide: Lexicon
) -> None:
    """Issue 31: the next check's agents reach a referee still holding the last check's
    seats; it closes them with 1013 (spec: try again later). The kit tries again after
    a back-off: every check passes (each used to FAIL "closed (1013) while waiting for
    NAME" after the first)."""
    async with _SlowToFreeSeats(referee.ports["cmpn402"], hold=0.4) as quirky:
        results = await _run(quirky.port, gcide, ["pass", "exchange", "binary", "split"])
    assert [r.status for r in results] == [Status.PASS] * 4, [
        (r.check.id, r.status, r.detail) for r in results
    ]
    assert quirky.refused > 0  # the quirk was met, and retried
    assert any("1013" in r.detail for r in results)


@pytest.fixture
async def slow_pinging_referee(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only("cmpn402")
    config = replace(config, cmpn402=Cmpn402Config(ping_interval=SLOW_PING, challenge_time=1.0))
    srv = MeepleServer(config, rng=random.Random(402))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()


SLOW_PING = 7.5  # 2 intervals and a margin: past the old fixed 15 s limit


async def test_the_heartbeat_check_waits_as_long_as_the_ping_interval_asks(
    slow_pinging_referee: MeepleServer, gcide: Lexicon
) -> None:
    """Issue 31: with ``--ping-interval 7.5`` the ping check waits two intervals (it used
    to FAIL at its fixed 15 s limit); it passes at the first ping."""
    results = await run_server_kit(
        "cmpn402",
        "127.0.0.1",
        slow_pinging_referee.ports["cmpn402"],
        lexicon=gcide,
        wait=1.0,
        only=["cmpn402.server.heartbeat-ping"],
        options={"ping_interval": SLOW_PING},
    )
    assert results[0].status is Status.PASS, results[0]
    assert results[0].seconds <= 2 * SLOW_PING + 1, results[0].seconds


def _client_proxy() -> Any:
    from meeple.check.clients import Observations
    from meeple.check.cmpn402_client import _Cmpn402Proxy

    proxy = _Cmpn402Proxy(Observations("cmpn402", 2), 0)
    proxy.refuse_next = False
    return proxy


async def test_the_client_kit_does_not_grade_a_turn_its_own_drop_took_away() -> None:
    """Issue 31: the turn reaches the agent coalesced, and the kit's planned drop (END
    reason 2) 28 ms later: the agent could not move, so that turn is not one it owed
    (``coalesced`` used to FAIL "0 moves for 1 turns")."""
    from meeple.protocols.cmpn402 import EndMessage, EndReason, Name, NameRequest, Start

    proxy = _client_proxy()
    board = tuple("." * 15 for _ in range(15))
    proxy.to_client(ws_frame(2, NameRequest().encode()), "paced")
    proxy.from_client(ws_frame(2, Name("Alice").encode()))
    proxy.to_client(
        ws_frame(2, Start(1, "ABCDEFG", board, 0, 0, 60_000, 120_000).encode()), "coalesced"
    )
    assert proxy.obs.turns["coalesced"] == 1
    proxy.obs.disconnect_game = True  # the kit's cutter: the planned drop
    proxy.to_client(ws_frame(2, EndMessage(EndReason.CONNECTION_ERROR, 0, 0).encode()), "paced")
    assert proxy.obs.turns["coalesced"] == proxy.obs.answered["coalesced"] == 0


async def test_the_client_kit_does_not_take_its_own_shutdown_for_the_planned_drop() -> None:
    """Issue 31: an END 2 when the kit's agent shut down (no planned drop made) is not the
    drop ``resume`` grades: it stays "could not test" (it used to FAIL)."""
    from meeple.check.clients import CLIENT_CHECKS
    from meeple.check.core import Fixtures, run_check
    from meeple.protocols.cmpn402 import EndMessage, EndReason, Name, NameRequest, Start

    proxy = _client_proxy()
    board = tuple("." * 15 for _ in range(15))
    proxy.to_client(ws_frame(2, NameRequest().encode()), "paced")
    proxy.from_client(ws_frame(2, Name("Alice").encode()))
    proxy.to_client(
        ws_frame(2, Start(2, "ABCDEFG", board, 0, 0, 60_000, 120_000).encode()), "paced"
    )
    proxy.to_client(ws_frame(2, EndMessage(EndReason.CONNECTION_ERROR, 0, 0).encode()), "paced")
    proxy.obs.connections = 1
    resume = next(c for c in CLIENT_CHECKS if c.id == "cmpn402.client.resume")
    target = SimpleNamespace(obs=proxy.obs)
    result = await run_check(resume, target, Fixtures(target, 1.0), wait=1.0)
    assert result.status is Status.COULD_NOT_TEST, result
    assert "did not drop" in result.detail, result.detail


@pytest.mark.parametrize(
    ("name", "own", "step"),
    [
        ("both agents first", "start", "START to both"),
        ("text frames", "binary", None),
    ],
)
async def test_a_set_up_that_breaks_another_rule_could_not_test(
    name: str, own: str, step: str | None, referee: MeepleServer, gcide: Lexicon
) -> None:
    """Issue 31, every check stands alone: a referee that breaks START (or sends text
    frames) FAILs the check of that rule; ``pass``, which only needs a game to start,
    could not test, naming the set-up step (or the transport fault) that blocked it."""
    to_client, _, _ = BROKEN[name]
    async with Mangler(referee.ports["cmpn402"], b"", cut=ws_units, to_client=to_client) as q:
        results = await _run(q.port, gcide, [f"cmpn402.server.{own}", "cmpn402.server.pass"])
    by_id = {r.check.id.removeprefix("cmpn402.server."): r for r in results}
    assert by_id[own].status is Status.FAIL, by_id[own]
    blocked = by_id["pass"]
    assert blocked.status is Status.COULD_NOT_TEST, blocked
    assert blocked.blocked, blocked
    if step is not None:
        assert blocked.step is not None
        assert blocked.step.what == step, blocked.step
    else:
        assert blocked.fault is not None
        assert blocked.fault.name == "text WebSocket frames", blocked.fault


@pytest.mark.parametrize(
    ("race", "status", "said"),
    [
        (None, Status.PASS, ""),
        ("after", Status.FAIL, "after END the referee went on with"),
        ("before", Status.DIFFERS, "before END"),
    ],
)
async def test_a_play_behind_the_game_ending_no_challenge(
    race: str | None, status: Status, said: str, referee: MeepleServer, gcide: Lexicon
) -> None:
    """Issue 31: a whole game to the PLAY that uses the last tiles; the other agent sends
    NO_CHALLENGE and its own PLAY in one TCP write. meeple's referee ends the game (END
    to both, the standard end's scores) and ignores the PLAY: pass. A referee that echoes
    the PLAY behind END FAILs (READY takes no PLAY); one that scores it before its END,
    as the course's referee does, differs from meeple's reading."""
    async with _Referee(referee.ports["cmpn402"], race=race) as relay:
        (result,) = await _run(relay.port, gcide, ["cmpn402.server.end-race"])
    assert result.status is status, result
    assert said in result.detail, result.detail
    if race is not None:
        assert relay.raced, "the check sent no PLAY behind its NO_CHALLENGE"


async def test_the_client_kit_grades_a_name_sent_again_but_not_on_a_new_connection() -> None:
    """Issue 31: a NAME after the agent was named (here in THINKING) breaks the spec's
    client state machine (NAME only in INIT, answering the server's NAME) and is kept
    for ``name-once``; a NAME on a new connection, after the server's NAME, is not."""
    from meeple.protocols.cmpn402 import Name, NameRequest, Start

    proxy = _client_proxy()
    board = tuple("." * 15 for _ in range(15))
    proxy.opened()
    proxy.to_client(ws_frame(2, NameRequest().encode()), "paced")
    proxy.from_client(ws_frame(2, Name("Alice").encode()))
    assert proxy.obs.renamed == []
    proxy.to_client(
        ws_frame(2, Start(1, "ABCDEFG", board, 0, 0, 60_000, 120_000).encode()), "paced"
    )
    proxy.from_client(ws_frame(2, Name("Alice").encode()))
    assert len(proxy.obs.renamed) == 1
    assert "THINKING" in proxy.obs.renamed[0], proxy.obs.renamed
    proxy.opened()  # the agent connects again: INIT (spec, "Disconnection from Server")
    proxy.to_client(ws_frame(2, NameRequest().encode()), "paced")
    proxy.from_client(ws_frame(2, Name("Alice").encode()))
    assert len(proxy.obs.renamed) == 1


async def _resume_result(proxy: Any) -> Result:
    from meeple.check.clients import CLIENT_CHECKS
    from meeple.check.core import Fixtures, run_check

    resume = next(c for c in CLIENT_CHECKS if c.id == "cmpn402.client.resume")
    target = SimpleNamespace(obs=proxy.obs)
    return await run_check(resume, target, Fixtures(target, 1.0), wait=1.0)


def _two_games(proxy: Any, *, second_ends: bool) -> None:
    """The agent named; a first game to END 0; the second's START (and END 0)."""
    from meeple.protocols.cmpn402 import EndMessage, EndReason, Name, NameRequest, Start

    board = tuple("." * 15 for _ in range(15))
    proxy.obs.games = 2
    proxy.opened()
    proxy.obs.connections = 1
    proxy.to_client(ws_frame(2, NameRequest().encode()), "paced")
    proxy.from_client(ws_frame(2, Name("Alice").encode()))
    start = Start(2, "ABCDEFG", board, 0, 0, 60_000, 120_000)
    end = EndMessage(EndReason.ALL_TILES_USED, 9, 7)
    for m in (start, end, start, *([end] if second_ends else [])):
        proxy.to_client(ws_frame(2, m.encode()), "paced")


async def test_the_client_kit_does_not_grade_a_drop_that_came_too_late() -> None:
    """Issue 31: the kit's cutter cut its agent's connection only once the last game was
    over (no END reason 2 reached the agent): nothing of the spec's "Disconnection"
    happened, so ``resume`` could not test (it used to PASS on the games played)."""
    proxy = _client_proxy()
    _two_games(proxy, second_ends=True)
    assert proxy.obs.ends == 2
    proxy.obs.disconnect_game = True  # the cut, after the last END
    result = await _resume_result(proxy)
    assert result.status is Status.COULD_NOT_TEST, result
    assert "did not happen as planned" in result.detail, result.detail


async def test_the_client_kit_does_not_grade_its_own_agent_failing_after_the_drop() -> None:
    """Issue 31: the planned drop reached the agent (END 2), then the kit's own agent
    failed and never came back: the game could not resume through no fault of the
    agent under test, so ``resume`` could not test (it used to FAIL "1 of 2 games")."""
    from meeple.protocols.cmpn402 import EndMessage, EndReason

    proxy = _client_proxy()
    _two_games(proxy, second_ends=False)
    proxy.obs.disconnect_game = True
    proxy.to_client(ws_frame(2, EndMessage(EndReason.CONNECTION_ERROR, 0, 0).encode()), "paced")
    assert proxy.obs.drop_told
    proxy.obs.kit_player_failed = True
    proxy.obs.kit_errors.append("the kit's player stopped: ConnectionError()")
    result = await _resume_result(proxy)
    assert result.status is Status.COULD_NOT_TEST, result
    assert "the kit's agent failed" in result.detail, result.detail


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.binary(max_size=40).filter(lambda b: b[:1] != b"\x00")),
        max_size=20,
    )
)
def test_the_client_kit_takes_any_frames_and_no_reconnect_is_a_second_name(
    ops: list[bytes | None],
) -> None:
    """Any binary frames both ways (none a NAME) between reconnects (each a new
    connection: the server's NAME, the agent's): the relay never raises, and no NAME
    is graded as sent again (``name-once``)."""
    from meeple.protocols.cmpn402 import Name, NameRequest

    async def run() -> None:
        proxy = _client_proxy()
        for op in ops:
            if op is None:
                proxy.opened()
                proxy.to_client(ws_frame(2, NameRequest().encode()), "paced")
                proxy.from_client(ws_frame(2, Name("Alice").encode(), mask=b"abcd"))
            else:
                proxy.from_client(ws_frame(2, op, mask=b"abcd"))
                proxy.to_client(ws_frame(2, op), "paced")
        assert proxy.obs.renamed == []

    asyncio.run(run())


def test_end_race_has_a_play_for_a_rack_that_makes_no_word(gcide: Lexicon) -> None:
    """Issue 31: at a game's end the other agent may hold a lone Q (seen in a referee
    test's deal). ``end-race`` then sends one tile beside the board's tiles, scored by the
    engine with no word looked up (ERRATA: words only on CHALLENGE), rather than could not
    test; blanks alone give none."""
    from meeple.check.cmpn402 import placed_play
    from meeple.games.scrabble.board import Board
    from meeple.games.scrabble.moves import Placement
    from meeple.games.scrabble.rules import validate_play
    from meeple.games.scrabble.tiles import ENGLISH

    board = Board()
    for x, letter in enumerate("CAT", start=6):
        board.place(x, 7, letter)
    assert best_move(board, "Q", gcide, ENGLISH) is None
    play = placed_play(board, "Q")
    assert play is not None
    assert play.tiles == "Q"
    tile = Placement(y=play.row - 1, x=play.column - 1, tile="Q")
    assert validate_play(board, (tile,)).score == play.score > 0
    assert placed_play(board, "??") is None
