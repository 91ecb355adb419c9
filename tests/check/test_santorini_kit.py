"""The AM27 server kit: every check passes against meeple's own Santorini server, and
each MUST check fails against meeple's server behind a relay that breaks its rule."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

import pytest
from tests.check.broken import (
    Mangler,
    am27_text,
    assert_fail,
    first_message_only,
    whole_messages_only,
)

from meeple.check import run_server_kit, server_checks
from meeple.check.core import Level, Result, Status
from meeple.check.santorini import STREAM_HEADER, object_stream_units
from meeple.server.app import MeepleServer
from meeple.server.config import SantoriniConfig, ServerConfig

HEARTBEAT = 1.0  # the server's heartbeat timeout in these tests (ERRATA: 5 s)


@pytest.fixture
async def am27(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only("santorini")
    config = replace(config, santorini=SantoriniConfig(heartbeat_timeout=HEARTBEAT))
    srv = MeepleServer(config, rng=random.Random(27))
    await srv.start()
    yield srv
    await srv.stop()


async def _run(port: int, only: list[str] = (), wait: float = 3.0) -> list[Result]:  # type: ignore[assignment]
    return await run_server_kit(
        "santorini",
        "127.0.0.1",
        port,
        lexicon=None,
        wait=wait,
        only=only,
        options={"heartbeat": HEARTBEAT},
    )


async def test_every_check_passes_against_meeple(am27: MeepleServer) -> None:
    results = await _run(am27.ports["santorini"])
    assert len(results) >= 30
    for r in results:
        assert r.status is Status.PASS, (r.check.id, r.status, r.detail)


def test_every_am27_message_has_a_check() -> None:
    """Coverage: each message of the spec and each INFO code of the ERRATA is named."""
    checks = server_checks("santorini")
    assert len({c.id for c in checks}) == len(checks)
    assert all(c.level in (Level.MUST, Level.SHOULD) and c.section for c in checks)
    text = " ".join(f"{c.section} {c.title}" for c in checks).upper()
    for word in [
        "SERVERSTATE",
        "REGISTER",
        "GODLISTMESSAGE",
        "GODINIT",
        "PLAYERSMESSAGE",
        "CHOSESTARTER",
        "STARTER",
        "UPDATE",
        "INFO",
        "ENDGAME",
        "WORKERINIT",
        "MOVE",
        "BUILD",
        "UNDO",
        "PASS",
        "LOSE",
        "PING",
        "NICKNAME",
        "WAIT",
        "OCCUPIED",
    ]:
        assert re.search(rf"\b{word}\b", text), word


def _sub(pattern: str, repl: str) -> Callable[[str], str | None]:
    return lambda text: re.sub(pattern, repl, text)


def _drop(kind: str) -> Callable[[str], str | None]:
    return lambda text: None if text.startswith(f'{{"type":"{kind}"') else text


def _chars_not_bytes(data: bytes) -> bytes:
    """A server that writes the length in characters, not modified-UTF-8 bytes."""
    if not data.startswith(b"yt"):
        return data
    text = data[4:].decode("utf-8")
    return b"yt" + len(text).to_bytes(2, "big") + data[4:]


def _levels_bottom_first(text: str) -> str:
    return re.sub(
        r'(levelList\\":)\[([\d,]+)\]',
        lambda m: m[1] + "[" + ",".join(reversed(m[2].split(","))) + "]",
        text,
    )


def _ignores(kind: str) -> Callable[[bytes], bytes]:
    """A server that ignores every client message of type ``kind`` (JSON lines)."""
    return lambda chunk: re.sub(rb'\{"type":"' + kind.encode() + rb'"[^\n]*\n', b"", chunk)


def _swap_winner(text: str) -> str:
    """ENDGAME with isWinner the other way round (the loser named winner)."""
    return (
        text.replace('isWinner\\":true', "\x00")
        .replace('isWinner\\":false', 'isWinner\\":true')
        .replace("\x00", 'isWinner\\":false')
    )


Rewrite = Callable[[bytes], bytes] | None
BROKEN: dict[str, tuple[Rewrite, Rewrite, list[str]]] = {
    "lengths in characters, not bytes": (_chars_not_bytes, None, ["unicode-length"]),
    "no PING": (am27_text(_drop("PING")), None, ["ping"]),
    "SERVERSTATE never active": (
        am27_text(_sub(r'active\\":true', r'active\\":false')),
        None,
        ["register-a"],
    ),
    "INFO codes as text": (
        am27_text(_sub(r'information\\":\\"[A-Z]+', r'information\\":\\"Try again')),
        None,
        ["nickname", "starter-wait", "occupied", "worker-wait"],
    ),
    "no god named for players": (
        am27_text(_sub(r"Atheist", "")),
        None,
        ["playersmessage"],
    ),
    "canPass always true": (
        am27_text(_sub(r'canPass\\":false', r'canPass\\":true')),
        None,
        ["update-off-turn", "lists-follow-steps", "lists-game"],
    ),
    "levelList bottom first": (am27_text(_levels_bottom_first), None, ["build"]),
    "no reachableCells": (
        am27_text(
            _sub(
                r'reachableCells\\":\[.*?\]\]\],\\"buildable',
                r'reachableCells\\":{},\\"buildable',
            )
        ),
        None,
        ["reachable", "lists-game"],
    ),
    "the dropped player wins": (
        am27_text(_sub(r'isWinner\\":false', r'isWinner\\":true')),
        None,
        ["disconnect"],
    ),
    "no ENDGAME": (
        am27_text(_drop("ENDGAME")),
        None,
        ["disconnect", "lose", "endgame-win", "gods-game"],
    ),
    "no UPDATE after WORKERINIT's worker": (
        am27_text(_sub(r'workerSex\\":\\"M', r'workerSex\\":\\"F')),
        None,
        ["workerinit"],
    ),
    "PINGs do not count as life": (
        None,
        lambda chunk: re.sub(rb'\{"type":"PING"[^\n]*\n', b"", chunk),
        ["heartbeat-kept"],
    ),
    "no SERVERSTATE": (am27_text(_drop("SERVERSTATE")), None, ["serverstate"]),
    "no object stream header": (
        lambda data: b"" if data == STREAM_HEADER else data,
        None,
        ["object-stream"],
    ),
    "no PLAYERSMESSAGE": (am27_text(_drop("PLAYERSMESSAGE")), None, ["register-b"]),
    "no GODLISTMESSAGE": (am27_text(_drop("GODLISTMESSAGE")), None, ["godlist"]),
    "LOSE makes the loser the winner": (am27_text(_swap_winner), None, ["lose"]),
    "only whole lines per read": (None, whole_messages_only(b"\n"), ["split"]),
    "only the first line of a read": (
        None,
        first_message_only(b"\n"),
        ["coalesced", "coalesced-ping"],
    ),
}


# MUST checks whose broken server is a test of its own (a relay the tables cannot express).
ELSEWHERE = {"heartbeat-timeout": "test_a_server_that_never_drops_a_silent_player_fails"}


def test_every_must_check_has_a_broken_server() -> None:
    """Issue 23: for each MUST rule a check covers, a broken server proves it can fail."""
    broken = {i for _, _, ids in BROKEN.values() for i in ids}
    broken |= {i for ids in IGNORED.values() for i in ids}
    assert all(callable(globals().get(test)) for test in ELSEWHERE.values())
    broken |= set(ELSEWHERE)
    checks = server_checks("santorini")
    must = {c.id.removeprefix("santorini.server.") for c in checks if c.level is Level.MUST}
    assert must - broken == set()


@pytest.mark.parametrize("name", list(BROKEN))
async def test_a_broken_am27_server_fails_its_checks(name: str, am27: MeepleServer) -> None:
    to_client, to_server, ids = BROKEN[name]
    async with Mangler(
        am27.ports["santorini"],
        b"",
        cut=object_stream_units,
        to_client=to_client,
        to_server=to_server,
    ) as broken:
        results = await _run(broken.port, [f"santorini.server.{i}" for i in ids], wait=1.0)
    assert_fail(results, "santorini.server.", ids)


# A server that ignores one client message: the check of that message must fail.
IGNORED = {
    "GODINIT": ["godinit"],
    "CHOSESTARTER": ["starter"],
    "MOVE": ["move"],
    "PASS": ["pass"],
    "UNDO": ["undo"],
    "LOSE": ["lose"],
}


@pytest.mark.parametrize("kind", list(IGNORED))
async def test_a_server_that_ignores_a_message_fails_its_check(
    kind: str, am27: MeepleServer
) -> None:
    ids = IGNORED[kind]
    async with Mangler(
        am27.ports["santorini"], b"", cut=object_stream_units, to_server=_ignores(kind)
    ) as broken:
        # Half a second a wait: each fails by a wait for the answer that runs out.
        results = await _run(broken.port, [f"santorini.server.{i}" for i in ids], wait=0.5)
    assert_fail(results, "santorini.server.", ids)


async def test_json_lines_framing_is_another_reading_not_a_failure(tmp_path: Path) -> None:
    """ERRATA: JSON lines server → client is meeple's option; the kit says "differs"."""
    config = ServerConfig(database=str(tmp_path / "m.sqlite3")).only("santorini")
    config = replace(config, santorini=SantoriniConfig(framing="lines"))
    srv = MeepleServer(config, rng=random.Random(1))
    await srv.start()
    try:
        results = await _run(
            srv.ports["santorini"],
            ["santorini.server.object-stream", "santorini.server.register-b"],
        )
    finally:
        await srv.stop()
    assert [r.status for r in results] == [Status.DIFFERS, Status.PASS]


async def test_a_server_that_never_drops_a_silent_player_fails(am27: MeepleServer) -> None:
    """ERRATA: 5 s of silence is a disconnect; a relay PINGing for every client hides it."""
    ping = b'{"type":"PING","message":"{\\"message\\":\\"AIping\\"}"}\n'
    async with Mangler(
        am27.ports["santorini"], b"", cut=object_stream_units, keepalive=ping
    ) as broken:
        results = await _run(broken.port, ["santorini.server.heartbeat-timeout"], wait=1.0)
    assert results[0].status is Status.FAIL, results[0]


async def test_a_failed_set_up_blocks_the_checks_of_other_rules(am27: MeepleServer) -> None:
    """Issue 31.1: a server that ignores CHOSESTARTER: ``starter`` FAILs (its rule); the
    checks that only need the game set up could not test, naming the step, and a timeout
    shows what the connection last received."""
    ids = ["starter", "workerinit", "occupied", "move", "build", "lose", "disconnect"]
    async with Mangler(
        am27.ports["santorini"], b"", cut=object_stream_units, to_server=_ignores("CHOSESTARTER")
    ) as broken:
        results = await _run(broken.port, [f"santorini.server.{i}" for i in ids], wait=0.5)
    by_id = {r.check.id.removeprefix("santorini.server."): r for r in results}
    assert by_id["starter"].status is Status.FAIL, by_id["starter"]
    assert "last bytes received: " in by_id["starter"].detail, by_id["starter"].detail
    assert "PLAYERSMESSAGE" in by_id["starter"].detail, by_id["starter"].detail
    for i in ids[1:]:
        r = by_id[i]
        assert r.status is Status.COULD_NOT_TEST, (i, r.status, r.detail)
        assert r.step is not None, (i, r.detail)
        assert r.step.what.startswith("CHOSESTARTER"), (i, r.step)
