"""Issue 31: the AM27 (Santorini) and Spectrangle server kits do not fail what the spec
allows. Each test is a small quirky server (meeple's behind a relay, or a fake of a few
lines) that follows the spec where meeple's reading is narrower; the kit must not FAIL
the rule it follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.check.broken import Mangler, am27_text

from meeple.check import run_server_kit
from meeple.check.core import Result, Status
from meeple.check.report import causes, to_text
from meeple.check.santorini import line, object_stream_units
from meeple.protocols.santorini import (
    God,
    GodInit,
    GodList,
    Players,
    Register,
    ServerState,
    decode,
)
from meeple.server.app import MeepleServer
from meeple.server.config import SantoriniConfig, ServerConfig

HEARTBEAT = 1.0


@pytest.fixture
async def am27(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only("santorini")
    config = replace(config, santorini=SantoriniConfig(heartbeat_timeout=HEARTBEAT))
    srv = MeepleServer(config, rng=random.Random(27))
    await srv.start()
    yield srv
    await srv.stop()


@pytest.fixture
async def spectrangle(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only("spectrangle")
    srv = MeepleServer(config, rng=random.Random(1234))
    await srv.start()
    yield srv
    await srv.stop()


async def _am27(port: int, ids: list[str], wait: float = 1.0) -> dict[str, Result]:
    results = await run_server_kit(
        "santorini",
        "127.0.0.1",
        port,
        lexicon=None,
        wait=wait,
        only=[f"santorini.server.{i}" for i in ids],
        options={"heartbeat": HEARTBEAT},
    )
    return {r.check.id.removeprefix("santorini.server."): r for r in results}


# --- two god lists: the spec's flow (§3.1) ----------------------------------------------


class GodLists:
    """A fake AM27 server (JSON lines) whose god choosing is the spec's flow: ``lists``
    GODLISTMESSAGEs (by default one per player), the players in turn, each answered
    GODINIT, then PLAYERSMESSAGE (§3.1, §3.2.1)."""

    GODS = ("Apollo", "Artemis", "Athena", "Atlas", "Demeter", "Hephaestus", "Minotaur", "Pan")

    def __init__(self, lists: int = 2) -> None:
        self.lists = lists
        self.port = 0
        self.waiting: list[tuple[str, asyncio.StreamWriter]] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> GodLists:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(line(ServerState(True, len(self.waiting) == 1)))
        game: dict[str, Any] = {}
        with contextlib.suppress(Exception):
            while raw := await reader.readline():
                m = decode(raw.decode().strip())
                if isinstance(m, Register):
                    self.waiting.append((m.nickname, writer))
                    if len(self.waiting) == 2:
                        await self._choose(list(self.waiting))
                        self.waiting.clear()
                elif isinstance(m, GodInit):
                    game.setdefault("choices", []).append(m)
        writer.close()

    async def _choose(self, seats: list[tuple[str, asyncio.StreamWriter]]) -> None:
        free = list(self.GODS)
        chosen: dict[str, str] = {}
        for i in range(self.lists):
            name = seats[i % len(seats)][0]
            for _, w in seats:
                w.write(line(GodList(name, tuple(God(g, "a god") for g in free))))
            chosen[name] = free.pop(0)  # the kit chooses the first god listed
        for name, _ in seats:
            chosen.setdefault(name, free.pop(0))
        players = Players(seats[0][0], tuple(chosen.items()))
        await asyncio.sleep(0.1)
        for _, w in seats:
            w.write(line(players))


async def test_two_god_lists_as_the_spec_gives_pass_the_god_checks() -> None:
    """§3.1: one GODLISTMESSAGE per player; the old kit waited for 4 and FAILed."""
    async with GodLists() as fake:
        by_id = await _am27(fake.port, ["godlist", "godinit"])
    for i in ("godlist", "godinit"):
        assert by_id[i].status is Status.PASS, (i, by_id[i].status, by_id[i].detail)


@settings(max_examples=8, deadline=None)
@given(lists=st.integers(min_value=1, max_value=6))
def test_any_number_of_god_lists_is_judged_by_the_flow(lists: int) -> None:
    """However many GODLISTMESSAGEs come before PLAYERSMESSAGE, the kit follows them: no
    kit error; the god checks pass from 2 lists (one per player) up, and FAIL below."""

    async def scenario() -> dict[str, Result]:
        async with GodLists(lists) as fake:
            return await _am27(fake.port, ["godlist", "godinit"])

    by_id = asyncio.run(scenario())
    assert not [r for r in by_id.values() if r.kit_error]
    want = Status.PASS if lists >= 2 else Status.FAIL
    assert by_id["godlist"].status is want, (lists, by_id["godlist"])
    assert by_id["godinit"].status is Status.PASS, (lists, by_id["godinit"])


# --- no ENDGAME to the player who sent LOSE (§4.2.6) -----------------------------------


def _no_endgame_to_the_loser(write: Callable[[bytes], None]) -> tuple[Any, Any]:
    lost = False

    def to_server(chunk: bytes) -> bytes:
        nonlocal lost
        lost = lost or b'"type":"LOSE"' in chunk
        return chunk

    def drop(text: str) -> str | None:
        return None if lost and text.startswith('{"type":"ENDGAME"') else text

    return am27_text(drop), to_server


async def test_no_endgame_to_the_loser_passes_lose(am27: MeepleServer) -> None:
    async with Mangler(
        am27.ports["santorini"], b"", cut=object_stream_units, relay=_no_endgame_to_the_loser
    ) as quirky:
        by_id = await _am27(quirky.port, ["lose"])
    assert by_id["lose"].status is Status.PASS, by_id["lose"]


# --- an illegal MOVE answered otherwise than meeple's reading --------------------------


def _info_without_update() -> Callable[[bytes], bytes]:
    """INFO to a player, and no fresh UPDATE after it (the spec asks for neither)."""
    after_info = False

    def drop(text: str) -> str | None:
        nonlocal after_info
        if text.startswith('{"type":"INFO"'):
            after_info = True
        elif after_info and text.startswith('{"type":"UPDATE"'):
            after_info = False
            return None
        return text

    return am27_text(drop)


async def test_an_illegal_move_answered_info_alone_differs(am27: MeepleServer) -> None:
    async with Mangler(
        am27.ports["santorini"],
        b"",
        cut=object_stream_units,
        per_connection=_info_without_update,
    ) as quirky:
        by_id = await _am27(quirky.port, ["move-illegal"])
    assert by_id["move-illegal"].status is Status.DIFFERS, by_id["move-illegal"]


# --- the spec's flow: active: true before REGISTER (B), open: false respected ----------


class _SlowRegisterA:
    """A server that takes 0.6 s to set up the game of a REGISTER (A), and ignores a
    REGISTER (B) while no game is waiting: a client that connects meanwhile is told
    active: false, so must not send REGISTER (B) yet (§2.1, §2.3)."""

    def __init__(self) -> None:
        self.waiting = False

    def __call__(self, write: Callable[[bytes], None]) -> tuple[Any, Any]:
        loop = asyncio.get_running_loop()

        def set_up(chunk: bytes) -> None:
            self.waiting = True
            write(chunk)

        def to_server(chunk: bytes) -> bytes:
            if b'"type":"REGISTER"' not in chunk:
                return chunk
            if b"nPlayers" in chunk:
                loop.call_later(0.6, set_up, chunk)
                return b""
            if not self.waiting:
                return re.sub(rb'\{"type":"REGISTER"[^\n]*\n', b"", chunk)
            self.waiting = False
            return chunk

        return (lambda data: data), to_server


async def test_register_b_waits_for_active(am27: MeepleServer) -> None:
    async with Mangler(
        am27.ports["santorini"], b"", cut=object_stream_units, relay=_SlowRegisterA()
    ) as quirky:
        by_id = await _am27(quirky.port, ["register-b", "playersmessage"])
    for i in ("register-b", "playersmessage"):
        assert by_id[i].status is Status.PASS, (i, by_id[i].status, by_id[i].detail)


class _Busy:
    """A server that turns its first ``n`` connections away: SERVERSTATE open: false, and
    what such a client sends is ignored (§2.1: open says whether it was accepted)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def __call__(self, write: Callable[[bytes], None]) -> tuple[Any, Any]:
        turned_away = self.left > 0
        self.left -= 1
        closed = am27_text(lambda t: t.replace('open\\":true', 'open\\":false'))

        def to_client(data: bytes) -> bytes:
            return closed(data) if turned_away else data

        def to_server(chunk: bytes) -> bytes:
            return b"" if turned_away else chunk

        return to_client, to_server


async def test_open_false_is_respected(am27: MeepleServer) -> None:
    async with Mangler(
        am27.ports["santorini"], b"", cut=object_stream_units, relay=_Busy(2)
    ) as quirky:
        by_id = await _am27(quirky.port, ["register-b"])
    assert by_id["register-b"].status is Status.PASS, by_id["register-b"]


# --- a server that stops accepting connections ------------------------------------------


class _DiesAfterFirst(Mangler):
    """Stops listening once its first connection has ended (a crashed server)."""

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await super()._handle(reader, writer)
        if self._server is not None:
            self._server.close()


async def test_a_server_that_stops_accepting_is_said_once(am27: MeepleServer) -> None:
    async with _DiesAfterFirst(am27.ports["santorini"], b"", cut=object_stream_units) as dying:
        ids = ["serverstate", "ping", "register-a", "register-b", "starter"]
        by_id = await _am27(dying.port, ids)
    assert by_id["serverstate"].status is Status.PASS, by_id["serverstate"]
    said = "the server stopped accepting connections during check santorini.server.ping"
    for i in ids[1:]:
        assert by_id[i].status is Status.COULD_NOT_TEST, (i, by_id[i])
        assert said in by_id[i].detail, (i, by_id[i].detail)
    # Said once: one root cause in the report, blocking the four checks after it.
    (cause,) = causes(list(by_id.values()))
    assert cause.title == said
    assert cause.blocked == 4
    assert said in to_text("quirky", list(by_id.values())).splitlines()[2]


# --- Spectrangle: skip and exchange refused with any of the spec's error words ---------


async def test_skip_and_exchange_refused_with_invalid_command_pass(
    spectrangle: MeepleServer,
) -> None:
    """Spectrangle 1.4 defines invalidMove, invalidCommand and invalidName but assigns
    none to a skip or exchange of a player who can place: invalidCommand is as good."""
    ids = ["skip-when-can-place", "exchange-when-can-place"]
    async with Mangler(
        spectrangle.ports["spectrangle"],
        b"\n",
        to_client=lambda m: re.sub(rb"^invalidMove", b"invalidCommand", m),
    ) as quirky:
        results = await run_server_kit(
            "spectrangle",
            "127.0.0.1",
            quirky.port,
            lexicon=None,
            wait=1.0,
            only=[f"spectrangle.server.{i}" for i in ids],
        )
    for r in results:
        assert r.status is Status.PASS, (r.check.id, r.status, r.detail)
    assert len(results) == 2


async def test_crlf_accepted_with_a_welcome_the_welcome_check_passes(
    spectrangle: MeepleServer,
) -> None:
    """A server that welcomes with a trailing space (``welcome `` : the welcome check
    passes it) accepted the CRLF line: crlf must not FAIL it."""
    ids = ["welcome", "crlf"]
    async with Mangler(
        spectrangle.ports["spectrangle"],
        b"\n",
        to_client=lambda m: re.sub(rb"^welcome\n", b"welcome \n", m),
    ) as quirky:
        results = await run_server_kit(
            "spectrangle",
            "127.0.0.1",
            quirky.port,
            lexicon=None,
            wait=1.0,
            only=[f"spectrangle.server.{i}" for i in ids],
        )
    assert [r.status for r in results] == [Status.PASS, Status.PASS], results
