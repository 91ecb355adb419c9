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
    web_player,
)

from meeple.check.clients import CLIENT_CHECKS, LAST_WORDS, run_client_kit
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
    # Whole games under a loaded `make test` (three workers on two cores) can take
    # longer than a team's default; a stalled client is caught by turn_wait instead.
    timeout: float = 120.0,
    turn_wait: float = 30.0,
    last_words: float = LAST_WORDS,
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
        last_words=last_words,
    )
    return {r.check.id.split(".", 2)[2]: r for r in results}


# Defects that stall the game: the kit stops waiting after --turn-wait. Other runs get a
# generous one, so a slow machine never looks like a stalled client.
STALLS = frozenset(
    {"no-retry", "chunks", "first-only", "gives-up", "regex", "first-frame-only", "leaves-on-drop"}
)


def _turn_wait(defects: frozenset[str]) -> float:
    return 3.0 if defects & STALLS else 15.0


def _last_words(defects: frozenset[str]) -> float:
    """A stalled client is still connected when the kit gives up on it, and says no
    goodbye: the kit's full LAST_WORDS (3 s) only added to each stalled run (issue 33)."""
    return 0.5 if defects & STALLS else LAST_WORDS


# A check that depends on the deal: whether a game tells the client to skip.
DEPENDS_ON_THE_DEAL = {
    "skip-line",
    "ping-interval",
    "challenge-answered",
}  # (and on how long the games last)


@pytest.mark.parametrize(
    "protocol", ["twente", "clarkson", "spectrangle", "santorini", "cmpn402", "web"]
)
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
        if protocol == "web":  # meeple has no Python browser: the raw one, without defects
            return await web_player(port, 2, frozenset())
        return await play_clarkson("127.0.0.1", port, "Alice", gcide, players=2, games=2)

    with configure("greedy", 0):
        results = await _kit(protocol, gcide, bot)
    assert len(results) >= 10
    for name, r in results.items():
        if name in DEPENDS_ON_THE_DEAL and r.status is Status.COULD_NOT_TEST:
            continue
        assert r.status is Status.PASS, (name, r.status, r.detail)


def test_the_twente_kit_grades_an_announce_after_welcome_per_connection() -> None:
    """Issue 31: ANNOUNCE after WELCOME on one connection is kept for ``announce-once``
    (spec E012), and its E012 is not a refused move; a client that connects again and
    announces anew is not graded."""
    from meeple.check.clients import CLIENT_KITS, Observations

    proxy = CLIENT_KITS["twente"].proxy(Observations("twente", 1), 0)
    announce, welcome = b"ANNOUNCE\x1fAlice\x1e", b"WELCOME\x1fAlice\x1e"
    proxy.opened()
    proxy.from_client(announce)
    proxy.obs.probe_sent = True  # the kit's E002 probe is another check's business
    proxy.to_client(welcome, "paced")
    assert proxy.obs.renamed == []
    proxy.from_client(announce)
    assert proxy.obs.renamed == ["ANNOUNCE|Alice after WELCOME"]
    # Its E012 may come once the game has started: the answer to ANNOUNCE, not a refused
    # move (``legal`` FAILed on it); an E012 nobody asked for still counts.
    proxy.in_game = True
    proxy.to_client(b"ERROR\x1fE012\x1e", "paced")
    assert proxy.obs.refused_by_server == []
    proxy.to_client(b"ERROR\x1fE012\x1e", "paced")
    assert proxy.obs.refused_by_server == ["ERROR|E012"]
    proxy.opened()
    proxy.from_client(announce)
    assert len(proxy.obs.renamed) == 1


def test_client_checks_are_unique_and_cite_sections() -> None:
    """Each client check has its own id, a section, a level and a title."""
    assert len({c.id for c in CLIENT_CHECKS}) == len(CLIENT_CHECKS)
    assert all(c.section and c.title for c in CLIENT_CHECKS)


# Defects that leave the game going are combined in one run; those that stall it
# (the kit then stops waiting after --turn-wait) run alone.
TWENTE = {
    frozenset(): [],
    frozenset({"announce-late", "out-of-turn", "garbage", "after-end", "announce-again"}): [
        "announce-once",
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
    frozenset({"no-retry"}): ["info-retry"],  # differs (below), not a FAIL
    frozenset({"regex"}): ["coalesced"],
}


CMPN402 = {
    frozenset(): [],
    frozenset({"no-name", "outside-window", "late-move", "out-of-turn", "name-again"}): [
        "name-once",
        "name-first",
        "in-turn",
        "window",
        "not-after-end",
    ],
    frozenset({"no-retry"}): ["invalid-retry"],
    frozenset({"first-frame-only"}): ["coalesced"],
    frozenset({"leaves-on-drop"}): ["resume"],
}


WEB = {
    frozenset(): [],
    frozenset({"late-hello", "garbage", "out-of-turn", "after-end"}): [
        "hello-first",
        "decodes",
        "in-turn",
        "not-after-end",
        "other-leaves",
    ],
    frozenset({"no-retry"}): ["illegal-retry"],
    frozenset({"first-frame-only"}): ["coalesced"],
}


# Checks of a rule only meeple's reading has (ERRATA): their defect "differs", never FAILs.
# AM27 does not say a server answers an illegal step, nor what a client does then (§4.1.2).
DIFFERS = {("santorini", "info-retry")}


# The check of each kit that needs the kit to leave a game part-way (two games, then).
LEAVES = {
    "twente": "disconnect",
    "clarkson": "other-quits",
    "spectrangle": "player-left",
    "santorini": "other-leaves",
    "cmpn402": "resume",
    "web": "other-leaves",
}
BROKEN = {
    "twente": TWENTE,
    "clarkson": CLARKSON,
    "spectrangle": SPECTRANGLE,
    "santorini": SANTORINI,
    "cmpn402": CMPN402,
    "web": WEB,
}
CASES = [(protocol, d) for protocol, table in BROKEN.items() for d in table]


def _player(
    protocol: str, lexicon: Lexicon, games: int, defects: frozenset[str]
) -> Callable[[int], Coroutine[Any, Any, Any]]:
    def run(port: int) -> Coroutine[Any, Any, Any]:
        if protocol == "twente":
            return twente_player(port, games, defects)
        if protocol == "clarkson":
            return clarkson_player(port, games, lexicon, defects)
        if protocol == "spectrangle":
            return spectrangle_player(port, games, defects)
        if protocol == "santorini":
            return santorini_player(port, games, defects)
        if protocol == "web":
            return web_player(port, games, defects)
        return cmpn402_player(port, games, defects)

    return run


@pytest.mark.parametrize(
    ("protocol", "defects"), CASES, ids=[f"{p}-{'-'.join(sorted(d)) or 'none'}" for p, d in CASES]
)
async def test_a_broken_client_fails_its_checks(
    protocol: str, defects: frozenset[str], gcide: Lexicon
) -> None:
    """A small raw client per protocol: correct, it passes every check; each defect (one
    per rule a real client broke, issue 23) fails the check of that rule. Defects that
    leave the game going share a run; those that stall it run alone (--turn-wait)."""
    failing = BROKEN[protocol][defects]
    games = 2 if not failing or LEAVES[protocol] in failing else 1
    results = await _kit(
        protocol,
        gcide,
        _player(protocol, gcide, games, defects),
        games=games,
        turn_wait=_turn_wait(defects),
        last_words=_last_words(defects),
    )
    for name in failing:
        want = Status.DIFFERS if (protocol, name) in DIFFERS else Status.FAIL
        assert results[name].status is want, (name, results[name])
    if not failing:
        for name, r in results.items():
            if name in DEPENDS_ON_THE_DEAL and r.status is Status.COULD_NOT_TEST:
                continue
            assert r.status is Status.PASS, (name, r.status, r.detail)
