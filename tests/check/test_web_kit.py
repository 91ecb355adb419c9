"""The meeple-web/1 server kit: every check passes against meeple's web listener, and
each MUST check fails against it behind a relay that breaks its rule."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.check.broken import Mangler, assert_fail, ws_first_frame_only, ws_whole_frames_only

from meeple.check import run_server_kit, server_checks
from meeple.check.cmpn402 import ws_frame, ws_frame_parts, ws_units
from meeple.check.core import Level, Result, Status
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig, WebConfig


@pytest.fixture
async def web(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only(
        "spectrangle", "web", "cmpn402"
    )
    # The broken servers are relays on other ports (a port forward): their Host is
    # 127.0.0.1 with the relay's port (docs/web.md, "Hosts").
    config = config.with_overrides(web=WebConfig(hosts=("127.0.0.1",)))
    srv = MeepleServer(config, rng=random.Random(5))
    # The Scrabble checks play the engine's moves from the kit's word list (GCIDE, loaded
    # once per test session), and challenge one: the server's must be the same list.
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()


async def _run(
    port: int, lexicon: Lexicon, only: list[str] | None = None, wait: float = 1.0
) -> list[Result]:
    """The kit plays Scrabble from ``lexicon``: the server's own word list."""
    return await run_server_kit(
        "web", "127.0.0.1", port, lexicon=lexicon, wait=wait, only=only or []
    )


async def test_every_check_passes_against_meeple(web: MeepleServer, gcide: Lexicon) -> None:
    results = await _run(web.ports["web"], gcide)
    assert len(results) >= 39
    for r in results:
        assert r.status is Status.PASS, (r.check.id, r.status, r.detail)


def test_every_message_and_error_code_has_a_check() -> None:
    checks = server_checks("web")
    assert len({c.id for c in checks}) == len(checks)
    assert all(c.level in (Level.MUST, Level.SHOULD) and c.section for c in checks)
    text = " ".join(f"{c.id} {c.title}" for c in checks)
    # docs/protocols/web.md: every message of "Messages" and "Playing" (both ways), and
    # every error code of "Error codes" and of "Server → browser".
    words = (
        "hello welcome ping pong subscribe unsubscribe lobby game console delta seated"
        " unseated seat create sit rejoin bot ready leave play preview chat"
    )
    codes = (
        "too-large bad-json bad-message unknown-type not-now not-found too-many too-fast"
        " refused illegal"
    )
    for word in (words + " " + codes).split():
        assert word in text, word


def _json(rewrite: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Callable[[bytes], bytes]:
    """Rewrite each JSON message to the browser (None drops it)."""

    def unit(data: bytes) -> bytes:
        parts = ws_frame_parts(data)
        if parts is None or parts[0] != 1:
            return data
        message = rewrite(json.loads(parts[1]))
        return b"" if message is None else ws_frame(1, json.dumps(message).encode())

    return unit


def _when(kind: str, change: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def rewrite(m: dict[str, Any]) -> dict[str, Any]:
        if m.get("type") == kind:
            change(m)
        return m

    return _json(rewrite)


def _as_binary(data: bytes) -> bytes:
    parts = ws_frame_parts(data)
    return data if parts is None or parts[0] != 1 else ws_frame(2, parts[1])


def _fits_plus_one(m: dict[str, Any]) -> None:
    fits = m.get("data", {}).get("fits") or {}
    for places in fits.values():
        for place in places:
            place[1] += 1


def _ignores(kind: str) -> Callable[[bytes], bytes]:
    """A server that ignores every browser message of type ``kind`` (drops its frames)."""

    def chunk(data: bytes) -> bytes:
        units, rest = ws_units(data)
        if rest:
            return data  # a message split over reads: not one of the kit's play messages
        kept = []
        for u in units:
            parts = ws_frame_parts(u)
            try:
                drop = parts is not None and json.loads(parts[1]).get("type") == kind
            except (ValueError, AttributeError):
                drop = False
            if not drop:
                kept.append(u)
        return b"".join(kept)

    return chunk


def _refusals_as_illegal(message: dict[str, Any]) -> None:
    if message.get("code") in ("refused", "name-taken"):
        message["code"] = "illegal"


def _drop_error(code: str) -> Callable[[bytes], bytes]:
    """A server that answers nothing where it should say error ``code``."""
    return _json(lambda m: None if m.get("type") == "error" and m.get("code") == code else m)


def _rename_bots(m: dict[str, Any]) -> None:
    players = m.get("data", {}).get("players") or []
    m["data"]["players"] = [p.replace("easy", "robo") for p in players]


def _ascii_chat(m: dict[str, Any]) -> None:
    m["text"] = str(m.get("text", "")).encode("ascii", "replace").decode()


_REJOINED: set[str] = set()


def _no_view_after_rejoin(m: dict[str, Any]) -> dict[str, Any] | None:
    """A server that seats a rejoin but never sends the seat view again."""
    if m.get("type") == "seated" and not str(m.get("table", "")).startswith("table-"):
        _REJOINED.add(str(m.get("table")))  # a rejoin into a game: its uid
    if m.get("type") == "seat" and m.get("uid") in _REJOINED:
        return None
    return m


def _other_seat(m: dict[str, Any]) -> None:
    data = m.get("data", {})
    if isinstance(data.get("you"), int):
        data["you"] = 1 - data["you"]


def _zero_scores(m: dict[str, Any]) -> None:
    data = m.get("data", {})
    data["scores"] = [0 for _ in data.get("scores", [])]


def _preview_plus_one(m: dict[str, Any]) -> None:
    if isinstance(m.get("score"), int):
        m["score"] += 1


def _pending_plus_one(m: dict[str, Any]) -> None:
    pending = m.get("data", {}).get("pending")
    if isinstance(pending, dict) and isinstance(pending.get("score"), int):
        pending["score"] += 1


def _ignores_play(kind: str) -> Callable[[bytes], bytes]:
    """A server that ignores every ``play`` whose action is of ``kind``."""

    def chunk(data: bytes) -> bytes:
        units, rest = ws_units(data)
        if rest:
            return data
        kept = []
        for u in units:
            parts = ws_frame_parts(u)
            try:
                m = json.loads(parts[1]) if parts is not None else None
                drop = m.get("type") == "play" and m["action"].get("kind") == kind
            except (ValueError, AttributeError, KeyError, TypeError):
                drop = False
            if not drop:
                kept.append(u)
        return b"".join(kept)

    return chunk


def _one_move_too_many(m: dict[str, Any]) -> None:
    legal = m.get("data", {}).get("legal")
    if isinstance(legal, dict) and legal.get("moves"):
        legal["moves"].append([0, 24])


def _legal_off_turn(m: dict[str, Any]) -> None:
    data = m.get("data", {})
    if data.get("game") == "santorini" and data.get("legal") is None:
        data["legal"] = {"gods": [], "starters": [], "place": [], "moves": [], "builds": []}


Rewrite = Callable[[bytes], bytes] | None
BROKEN: dict[str, tuple[Rewrite, Rewrite, list[str]]] = {
    "text messages sent as binary": (_as_binary, None, ["hello", "ping"]),
    "pong with another id": (
        _when("pong", lambda m: m.update(id=0)),
        None,
        ["ping", "coalesced"],
    ),
    "errors without their codes": (
        _when("error", lambda m: m.update(code="error")),
        None,
        [
            "not-now",
            "bad-json",
            "bad-message",
            "bad-message-field",
            "unknown-type",
            "not-found",
            "too-large",
            "illegal",
            "out-of-turn",
            "bot-level",
            "name-taken",
            "leave",
            "leave-game",
            "unseated",
            "chat-not-now",
            "chat-bad",
            "too-fast",
            "too-many",
            "preview-not-now",
        ],
    ),
    "a seat view for the other seat": (_when("seat", _other_seat), None, ["seat-private"]),
    "scores that never move": (_when("seat", _zero_scores), None, ["play"]),
    "says nothing to an illegal move": (_drop_error("illegal"), None, ["illegal", "out-of-turn"]),
    "no seat view after a rejoin": (_json(_no_view_after_rejoin), None, ["rejoin"]),
    "ignores bot": (None, _ignores("bot"), ["bot"]),
    "bots not named after their level": (_when("seat", _rename_bots), None, ["bot"]),
    "refusals as illegal": (
        _when("error", _refusals_as_illegal),
        None,
        ["refused", "bot-level", "name-taken"],
    ),
    "ignores ready": (None, _ignores("ready"), ["ready"]),
    "ignores leave": (None, _ignores("leave"), ["leave", "leave-game"]),
    "never says unseated": (
        _when("unseated", lambda m: m.update(type="seated")),
        None,
        ["unseated"],
    ),
    "ignores chat": (None, _ignores("chat"), ["chat"]),
    "chat text as ASCII": (_when("chat", _ascii_chat), None, ["chat"]),
    "no chat rate limit": (_drop_error("too-fast"), None, ["too-fast"]),
    "no subscription limit": (_drop_error("too-many"), None, ["too-many"]),
    "a console snapshot's seq as text": (
        _when("console", lambda m: m.update(seq=str(m.get("seq")))),
        None,
        ["console"],
    ),
    "ignores unsubscribe": (None, _ignores("unsubscribe"), ["unsubscribe"]),
    "a bad chat line unanswered": (_drop_error("bad-message"), None, ["chat-bad"]),
    "a preview scored a point too high": (_when("preview", _preview_plus_one), None, ["preview"]),
    "welcome without max_message_size": (
        _when("welcome", lambda m: m.pop("max_message_size", None)),
        None,
        ["hello"],
    ),
    "lobby without rooms": (
        _when("lobby", lambda m: m.get("data", {}).pop("rooms", None)),
        None,
        ["lobby"],
    ),
    "seated without a token": (
        _when("seated", lambda m: m.pop("token", None)),
        None,
        ["seated"],
    ),
    "fits a point too high": (_when("seat", _fits_plus_one), None, ["fits"]),
    "a game snapshot without its view": (
        _when("game", lambda m: m.get("data", {}).pop("view", None) if "data" in m else None),
        None,
        ["game-topic"],
    ),
    "deltas that change nothing": (
        _when("game", lambda m: m.update(patch=[]) if "patch" in m else None),
        None,
        ["delta"],
    ),
    "a pending Scrabble play a point too high": (
        _when("seat", _pending_plus_one),
        None,
        ["scrabble-play"],
    ),
    "ignores accept": (None, _ignores_play("accept"), ["scrabble-play"]),
    "a Scrabble seat view without its board (a fail, never a kit error)": (
        _when("seat", lambda m: m["data"].pop("board") if m.get("game") == "scrabble" else None),
        None,
        ["scrabble-play"],
    ),
    "ignores challenge": (None, _ignores_play("challenge"), ["scrabble-challenge"]),
    "a Santorini legal move too many": (
        _when("seat", _one_move_too_many),
        None,
        ["santorini-legal"],
    ),
    "legal for the seat off turn": (_when("seat", _legal_off_turn), None, ["santorini-legal"]),
    "loses one of two frames in one read": (None, ws_first_frame_only, ["coalesced"]),
    "reads whole frames only": (None, ws_whole_frames_only, ["split"]),
}


def test_every_must_check_has_a_broken_server() -> None:
    """Issue 23: for each MUST rule a check covers, a broken server proves it can fail."""
    broken = {i for _, _, ids in BROKEN.values() for i in ids}
    must = {c.id.removeprefix("web.server.") for c in server_checks("web") if c.level is Level.MUST}
    assert must - broken == set()


@pytest.mark.parametrize("name", list(BROKEN))
async def test_a_broken_web_server_fails_its_checks(
    name: str, web: MeepleServer, gcide: Lexicon
) -> None:
    to_client, to_server, ids = BROKEN[name]
    async with Mangler(
        web.ports["web"], b"", cut=ws_units, to_client=to_client, to_server=to_server
    ) as broken:
        # A second and a half a wait: each of these fails, most by a wait that runs out
        # (half a second let a loaded machine's set-up steps run out too: could not
        # test, not fail).
        results = await _run(broken.port, gcide, [f"web.server.{i}" for i in ids], wait=1.5)
    assert_fail(results, "web.server.", ids)


async def test_a_failed_set_up_blocks_the_checks_of_other_rules(
    web: MeepleServer, gcide: Lexicon
) -> None:
    """Issue 31.1: a server that ignores ``sit``: ``seated`` (the rule of create and sit)
    FAILs; the checks that only need a full table could not test, naming the step."""
    ids = ["seated", "seat-private", "fits", "play", "illegal", "out-of-turn", "chat"]
    async with Mangler(web.ports["web"], b"", cut=ws_units, to_server=_ignores("sit")) as broken:
        results = await _run(broken.port, gcide, [f"web.server.{i}" for i in ids], wait=0.5)
    by_id = {r.check.id.removeprefix("web.server."): r for r in results}
    assert by_id["seated"].status is Status.FAIL, by_id["seated"]
    for i in ids[1:]:
        r = by_id[i]
        assert r.status is Status.COULD_NOT_TEST, (i, r.status, r.detail)
        assert r.step is not None, (i, r.detail)
        assert r.step.what == "sit at the table", (i, r.step)
