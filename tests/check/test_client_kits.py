"""The client kits: meeple's own bots pass every check; broken clients fail the checks of
the rules they break."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from tests.check.clients import (
    clarkson_player,
    cmpn402_player,
    santorini_player,
    spectrangle_player,
    twente_player,
)

from meeple.check.clients import CLIENT_CHECKS, run_client_kit
from meeple.check.core import Result, Status
from meeple.clients.clarkson import play_clarkson
from meeple.clients.cmpn402 import BuiltinAgent
from meeple.clients.cmpn402 import play as play_cmpn402
from meeple.clients.santorini import play_santorini
from meeple.clients.scrabble_bot import configure, play_twente
from meeple.clients.spectrangle import play_spectrangle
from meeple.games.scrabble.lexicon import Lexicon

pytestmark = pytest.mark.slow  # whole games over loopback, a few seconds each


async def _kit(
    protocol: str,
    lexicon: Lexicon,
    client: Callable[[int], Coroutine[Any, Any, Any]],
    *,
    games: int = 2,
    timeout: float = 30.0,
    turn_wait: float = 30.0,
) -> dict[str, Result]:
    results = await run_client_kit(
        protocol,
        "127.0.0.1",
        0,
        lexicon=lexicon,
        games=games,
        timeout=timeout,
        after_ready=client,
        turn_wait=turn_wait,
    )
    return {r.check.id.split(".", 2)[2]: r for r in results}


# Defects that stall the game: the kit stops waiting after --turn-wait. Other runs get a
# generous one, so a slow machine never looks like a stalled client.
STALLS = frozenset(
    {"no-retry", "chunks", "first-only", "gives-up", "regex", "first-frame-only", "leaves-on-drop"}
)


def _turn_wait(defects: frozenset[str]) -> float:
    return 3.0 if defects & STALLS else 15.0


# A check that depends on the deal: whether a game tells the client to skip.
DEPENDS_ON_THE_DEAL = {"skip-line", "ping-interval"}  # (and on how long the games last)


@pytest.mark.parametrize("protocol", ["twente", "clarkson", "spectrangle", "santorini", "cmpn402"])
async def test_meeples_own_bot_passes_every_client_check(protocol: str, gcide: Lexicon) -> None:
    """meeple's bot, two games (the second one the kit leaves): every check passes, ≥ 10."""

    async def bot(port: int) -> object:
        if protocol == "twente":
            return await play_twente("127.0.0.1", port, "Alice", gcide, players=2, games=2)
        if protocol == "spectrangle":
            return await play_spectrangle("127.0.0.1", port, "Alice", players=2, games=2)
        if protocol == "santorini":
            return await play_santorini("127.0.0.1", port, "Alice", games=2)
        if protocol == "cmpn402":
            uri = f"ws://127.0.0.1:{port}/"
            return await play_cmpn402(uri, "Alice", BuiltinAgent(gcide), games=2)
        return await play_clarkson("127.0.0.1", port, "Alice", gcide, players=2, games=2)

    with configure("greedy", 0):
        results = await _kit(protocol, gcide, bot)
    assert len(results) >= 10
    for name, r in results.items():
        if name in DEPENDS_ON_THE_DEAL and r.status is Status.COULD_NOT_TEST:
            continue
        assert r.status is Status.PASS, (name, r.status, r.detail)


def test_client_checks_are_unique_and_cite_sections() -> None:
    """Each client check has its own id, a section, a level and a title."""
    assert len({c.id for c in CLIENT_CHECKS}) == len(CLIENT_CHECKS)
    assert all(c.section and c.title for c in CLIENT_CHECKS)


# Defects that leave the game going are combined in one run; those that stall it
# (the kit then stops waiting after --turn-wait) run alone.
TWENTE = {
    frozenset(): [],
    frozenset({"announce-late", "out-of-turn", "garbage", "after-end"}): [
        "announce-first",
        "in-turn",
        "decodes",
        "not-after-end",
        "disconnect",
    ],
    frozenset({"no-retry"}): ["error-retry"],
    frozenset({"chunks"}): ["split"],
    frozenset({"first-only"}): ["coalesced"],
}


@pytest.mark.parametrize("defects", list(TWENTE), ids=lambda d: "-".join(sorted(d)) or "none")
async def test_a_broken_twente_client_fails_its_checks(
    defects: frozenset[str], gcide: Lexicon
) -> None:
    """A raw client that passes every turn: correct, it passes; each defect fails its check."""
    failing = TWENTE[defects]
    games = 2 if not failing or "disconnect" in failing else 1
    results = await _kit(
        "twente",
        gcide,
        lambda port: twente_player(port, games, defects),
        games=games,
        turn_wait=_turn_wait(defects),
    )
    for name in failing:
        assert results[name].status is Status.FAIL, (name, results[name])
    if not failing:
        for name, r in results.items():
            assert r.status is Status.PASS, (name, r.status, r.detail)


CLARKSON = {
    frozenset(): [],
    frozenset({"no-slash", "out-of-turn", "after-end", "no-quit"}): [
        "hello-grammar",
        "in-turn",
        "not-after-end",
        "quit",
    ],
    frozenset({"gives-up"}): ["other-quits"],
    frozenset({"no-retry"}): ["nok-retry"],
    frozenset({"chunks"}): ["split"],
    frozenset({"first-only"}): ["coalesced"],
}


@pytest.mark.parametrize("defects", list(CLARKSON), ids=lambda d: "-".join(sorted(d)) or "none")
async def test_a_broken_clarkson_client_fails_its_checks(
    defects: frozenset[str], gcide: Lexicon
) -> None:
    """A raw client playing the engine's moves: correct, it passes; each defect fails its check."""
    failing = CLARKSON[defects]
    games = 2 if not failing or "other-quits" in failing else 1
    results = await _kit(
        "clarkson",
        gcide,
        lambda port: clarkson_player(port, games, gcide, defects),
        games=games,
        turn_wait=_turn_wait(defects),
    )
    for name in failing:
        assert results[name].status is Status.FAIL, (name, results[name])
    if not failing:
        for name, r in results.items():
            assert r.status is Status.PASS, (name, r.status, r.detail)


SPECTRANGLE = {
    frozenset(): [],
    frozenset({"garbage", "out-of-turn", "after-end"}): [
        "connect-first",
        "decodes",
        "in-turn",
        "not-after-end",
        "player-left",
    ],
    frozenset({"no-retry"}): ["error-retry"],
}


@pytest.mark.parametrize("defects", list(SPECTRANGLE), ids=lambda d: "-".join(sorted(d)) or "none")
async def test_a_broken_spectrangle_client_fails_its_checks(
    defects: frozenset[str], gcide: Lexicon
) -> None:
    """A raw client playing the engine's placements: correct, it passes; defects fail."""
    failing = SPECTRANGLE[defects]
    games = 2 if not failing or "player-left" in failing else 1
    results = await _kit(
        "spectrangle",
        gcide,
        lambda port: spectrangle_player(port, games, defects),
        games=games,
        turn_wait=_turn_wait(defects),
    )
    for name in failing:
        assert results[name].status is Status.FAIL, (name, results[name])
    if not failing:
        for name, r in results.items():
            if name in DEPENDS_ON_THE_DEAL and r.status is Status.COULD_NOT_TEST:
                continue
            assert r.status is Status.PASS, (name, r.status, r.detail)


SANTORINI = {
    frozenset(): [],
    frozenset({"late-register", "garbage", "out-of-turn", "after-end", "no-ping"}): [
        "register-first",
        "decodes",
        "in-turn",
        "not-after-end",
        "other-leaves",
        "heartbeat",
    ],
    frozenset({"no-retry"}): ["info-retry"],
    frozenset({"regex"}): ["coalesced"],
}


@pytest.mark.parametrize("defects", list(SANTORINI), ids=lambda d: "-".join(sorted(d)) or "none")
async def test_a_broken_santorini_client_fails_its_checks(
    defects: frozenset[str], gcide: Lexicon
) -> None:
    """A raw AM27 player: correct, it passes; each defect fails its check (issue 23: a
    bot finding message boundaries with a regular expression misses coalesced ones)."""
    failing = SANTORINI[defects]
    games = 2 if not failing or "other-leaves" in failing else 1
    results = await _kit(
        "santorini",
        gcide,
        lambda port: santorini_player(port, games, defects),
        games=games,
        turn_wait=_turn_wait(defects),
    )
    for name in failing:
        assert results[name].status is Status.FAIL, (name, results[name])
    if not failing:
        for name, r in results.items():
            if name in DEPENDS_ON_THE_DEAL and r.status is Status.COULD_NOT_TEST:
                continue
            assert r.status is Status.PASS, (name, r.status, r.detail)


CMPN402 = {
    frozenset(): [],
    frozenset({"no-name", "outside-window", "late-move", "out-of-turn"}): [
        "name-first",
        "in-turn",
        "window",
        "not-after-end",
    ],
    frozenset({"no-retry"}): ["invalid-retry"],
    frozenset({"first-frame-only"}): ["coalesced"],
    frozenset({"leaves-on-drop"}): ["resume"],
}


@pytest.mark.parametrize("defects", list(CMPN402), ids=lambda d: "-".join(sorted(d)) or "none")
async def test_a_broken_cmpn402_agent_fails_its_checks(
    defects: frozenset[str], gcide: Lexicon
) -> None:
    """A raw WebSocket agent: correct, it passes; each defect fails its check (issue 23:
    an agent that loses one of two frames arriving together)."""
    failing = CMPN402[defects]
    games = 2 if not failing or "resume" in failing else 1
    results = await _kit(
        "cmpn402",
        gcide,
        lambda port: cmpn402_player(port, games, defects),
        games=games,
        turn_wait=_turn_wait(defects),
    )
    for name in failing:
        assert results[name].status is Status.FAIL, (name, results[name])
    if not failing:
        for name, r in results.items():
            if name == "challenge-answered" and r.status is Status.COULD_NOT_TEST:
                continue
            assert r.status is Status.PASS, (name, r.status, r.detail)
