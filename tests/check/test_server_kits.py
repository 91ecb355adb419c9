"""The server kits: every check passes against meeple's own server, and each MUST check
fails against a server broken in the way it describes."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from tests.check.broken import Mangler, first_message_only, whole_messages_only

from meeple.check import run_server_kit, server_checks
from meeple.check.core import Level, Result, Status
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer

TERMINATOR = {"twente": b"\x1e", "clarkson": b"\n", "spectrangle": b"\n"}
# Checks meeple's server cannot pass by design, and why: meeple serves several queues and
# games at once ("multi-game", ERRATA Twente), so the single-game error E010 does not occur.
NOT_APPLICABLE_TO_MEEPLE = {"twente.server.e010"}


@pytest.mark.parametrize("protocol", ["twente", "clarkson", "spectrangle"])
async def test_every_check_passes_against_meeple(
    protocol: str, server: MeepleServer, gcide: Lexicon
) -> None:
    """A full run against meeple's server: all pass (E010 n/a), at least 20 checks."""
    results = await run_server_kit(protocol, "127.0.0.1", server.ports[protocol], lexicon=gcide)
    assert len(results) >= 20
    for r in results:
        if r.check.id in NOT_APPLICABLE_TO_MEEPLE:
            assert r.status is Status.NOT_APPLICABLE, r
        else:
            assert r.status is Status.PASS, (r.check.id, r.status, r.detail)


def test_checks_cite_a_section_and_are_unique() -> None:
    """Every check has an id of its own, a spec section, MUST or SHOULD, and a title."""
    for protocol in ("twente", "clarkson", "spectrangle"):
        checks = server_checks(protocol)
        assert len({c.id for c in checks}) == len(checks)
        for c in checks:
            assert c.section
            assert c.title
            assert c.level in (Level.MUST, Level.SHOULD)
            assert c.id.startswith(f"{protocol}.server.")


def test_every_twente_message_and_error_code_has_a_check() -> None:
    """Coverage: each command and E001-E015 of the Twente spec is named by some check."""
    text = " ".join(f"{c.section} {c.title} {c.id}" for c in server_checks("twente")).upper()
    for command in [
        "ANNOUNCE",
        "WELCOME",
        "REQUESTGAME",
        "INFORMQUEUE",
        "STARTGAME",
        "NOTIFYTURN",
        "MAKEMOVE",
        "NEWTILES",
        "INFORMMOVE",
        "ERROR",
        "GAMEOVER",
        "PLAYERDISCONNECTED",
        "SENDCHAT",
        "NOTIFYCHAT",
    ]:
        assert command in text, command
    for n in range(1, 16):
        assert f"E{n:03d}" in text, n


def test_every_clarkson_message_has_a_check() -> None:
    """Coverage: each message of RFC §3.1-§3.17 is named by some check."""
    text = " ".join(f"{c.section} {c.title}" for c in server_checks("clarkson")).upper()
    for command in [
        "HELLO",
        "QUIT",
        "OK",
        "NOK",
        "USERSET",
        "USERCHANGE",
        "USERJOIN",
        "READY",
        "STARTING",
        "SCORE",
        "BOARDPUSH",
        "TILES",
        "TURN",
        "PLACE",
        "PASS",
        "EXCHANGE",
        "WINNER",
        "GOODBYE",
    ]:
        assert re.search(rf"\b{command}\b", text), command


def _sub(pattern: bytes, repl: bytes) -> Callable[[bytes], bytes]:
    return lambda m: re.sub(pattern, repl, m)


def _drop(prefix: bytes) -> Callable[[bytes], bytes]:
    return lambda m: b"" if m.startswith(prefix) else m


Broken = tuple[Callable[[bytes], bytes] | None, Callable[[bytes], bytes] | None, list[str]]
US = b"\x1f"
TW = TERMINATOR["twente"]
# name -> (to_client rewrite, to_server rewrite, the MUST checks that must fail)
TWENTE_BROKEN: dict[
    str, tuple[Callable[[bytes], bytes] | None, Callable[[bytes], bytes] | None, list[str]]
] = {
    "errors as text instead of codes (issue 23)": (
        _sub(rb"^ERROR\x1fE0\d\d.*\x1e$", b"ERROR\x1fSomething went wrong\x1e"),
        None,
        [
            "e001",
            "e002",
            "e003",
            "e003-direction",
            "e003-swap",
            "e004",
            "e005",
            "e006",
            "e008",
            "e009",
            "e011",
            "e012",
            "e013",
            "e014",
            "e015",
            "e007",
        ],
    ),
    "WELCOME with another name": (
        _sub(rb"^WELCOME\x1f", b"WELCOME\x1fX"),
        None,
        ["announce", "announce-chat"],
    ),
    "empty first name in STARTGAME (issue 23)": (
        _sub(rb"^STARTGAME\x1f[^\x1f]*", b"STARTGAME\x1f"),
        None,
        ["startgame"],
    ),
    "YOURTILES instead of NEWTILES (issue 23)": (
        _sub(rb"^NEWTILES", b"YOURTILES"),
        None,
        ["newtiles-opening", "newtiles-after-move", "newtiles-game"],
    ),
    "UTF-16BE text (issue 23)": (
        lambda m: m[:-1].decode("utf-8").encode("utf-16-be") + TW,
        None,
        ["delimiters-strict"],
    ),
    "wrong queue counts": (
        _sub(rb"^INFORMQUEUE\x1f(\d)", b"INFORMQUEUE\x1f9"),
        None,
        ["informqueue", "informqueue-full"],
    ),
    "E003 for a 3-player request despite TEAMPLAY": (
        None,
        _sub(rb"REQUESTGAME\x1f3", b"REQUESTGAME\x1f7"),
        ["requestgame-3"],
    ),
    "a single-game server's E010 without the count": (
        _sub(rb"^INFORMQUEUE\x1f1\x1f3\x1e$", b"ERROR\x1fE010\x1e"),
        None,
        ["e010"],
    ),
    "NOTIFYTURN flag inverted": (
        lambda m: re.sub(
            rb"^NOTIFYTURN\x1f([01])",
            lambda g: b"NOTIFYTURN\x1f" + (b"0" if g[1] == b"1" else b"1"),
            m,
        ),
        None,
        ["notifyturn-opening", "notifyturn-after-move"],
    ),
    "INFORMMOVE with the word in lower case": (
        lambda m: re.sub(
            rb"^(INFORMMOVE\x1f[^\x1f]*\x1fWORD\x1f[^\x1f]*\x1f[HV]\x1f)([A-Za-z]+)",
            lambda g: g[1] + g[2].lower(),
            m,
        ),
        None,
        ["informmove-word", "informmove-game"],
    ),
    "INFORMMOVE SWAP with a wrong count": (
        _sub(rb"(\x1fSWAP\x1f)3\x1e$", rb"\g<1>4" + TW),
        None,
        ["swap"],
    ),
    "no PLAYERDISCONNECTED": (_drop(b"PLAYERDISCONNECTED"), None, ["playerdisconnected"]),
    "the dropped player keeps a score": (
        lambda m: re.sub(rb"\x1f0(?=[\x1f\x1e])", b"\x1f5", m) if m.startswith(b"GAMEOVER") else m,
        None,
        ["gameover-disconnect"],
    ),
    "GAMEOVER DRAW instead of WIN": (
        _sub(rb"^GAMEOVER\x1fWIN", b"GAMEOVER\x1fDRAW"),
        None,
        ["gameover-win"],
    ),
    "no NOTIFYCHAT": (_drop(b"NOTIFYCHAT"), None, ["chat"]),
    "only whole messages per read": (None, whole_messages_only(TW), ["split"]),
    "only the first message of a read": (None, first_message_only(TW), ["coalesced"]),
}


async def _run_broken(
    protocol: str,
    server: MeepleServer,
    gcide: Lexicon,
    to_client: Callable[[bytes], bytes] | None,
    to_server: Callable[[bytes], bytes] | None,
    ids: list[str],
    keep_open: bool = False,
    per_connection: Callable[[], Callable[[bytes], bytes]] | None = None,
) -> list[Result]:
    async with Mangler(
        server.ports[protocol],
        TERMINATOR[protocol],
        keep_open=keep_open,
        per_connection=per_connection,
        to_client=to_client,
        to_server=to_server,
    ) as broken:
        full = [f"{protocol}.server.{i}" for i in ids]
        return await run_server_kit(
            protocol, "127.0.0.1", broken.port, lexicon=gcide, wait=0.5, only=full
        )


@pytest.mark.parametrize("name", list(TWENTE_BROKEN))
async def test_a_broken_twente_server_fails_its_checks(
    name: str, server: MeepleServer, gcide: Lexicon
) -> None:
    """Each deviation makes exactly the checks of the rules it breaks fail."""
    to_client, to_server, ids = TWENTE_BROKEN[name]
    results = await _run_broken("twente", server, gcide, to_client, to_server, ids)
    by_id = {r.check.id.removeprefix("twente.server."): r for r in results}
    for i in ids:
        assert by_id[i].status is Status.FAIL, (i, by_id[i].status, by_id[i].detail)
        assert by_id[i].transcript, "a failure carries the bytes"


CL = TERMINATOR["clarkson"]
CLARKSON_BROKEN: dict[
    str, tuple[Callable[[bytes], bytes] | None, Callable[[bytes], bytes] | None, list[str]]
] = {
    "no /version in HELLO's program (issue 23)": (
        _sub(rb"^(HELLO [^,]*,[^,]*,)[^,/]*/[^,]*", rb"\g<1>Python"),
        None,
        ["hello-program"],
    ),
    "no HELLO first": (_drop(b"HELLO"), None, ["hello-first", "hello-grammar", "hello-program"]),
    "NOK to a 1.0.1 HELLO": (_sub(rb"^OK Please", b"NOK Please"), None, ["ok"]),
    "no STARTING after READY (issue 23)": (_drop(b"STARTING"), None, ["ready-starting"]),
    "OK where NOK is due": (
        _sub(rb"^NOK", b"OK"),
        None,
        [
            "nok-unknown",
            "place-not-turn",
            "place-not-in-hand",
            "place-not-centre",
            "place-not-connected",
        ],
    ),
    "no USERCHANGE": (_drop(b"USERCHANGE"), None, ["userset", "userchange-others"]),
    "no USERJOIN": (_drop(b"USERJOIN"), None, ["userjoin-newcomer", "userjoin-others"]),
    "a malformed board": (
        _sub(rb"^\(0,4\) \(0,0\) \(0,0\) \(0,1\)", b"(0,4) (0,0) (0,1)"),
        None,
        ["boardpush-initial", "boardpush-game"],
    ),
    "SCORE gives the points of the turn, not the total": (
        lambda m: (
            re.sub(
                rb"^SCORE (\d+)",
                lambda g: b"SCORE " + str(int(g[1]) // 2 if int(g[1]) > 1 else 1).encode(),
                m,
            )
            if m.startswith(b"SCORE") and not m.startswith(b"SCORE 0 ")
            else m
        ),
        None,
        ["score-after-turn", "score-game"],
    ),
    "TURN names nobody": (_sub(rb"^TURN \S+", b"TURN nobody"), None, ["turn", "pass"]),
    "no WINNER": (_drop(b"WINNER"), None, ["pass-twice", "winner"]),
    "no TILES": (_drop(b"TILES"), None, ["exchange-all"]),
    "no SCORE for a scoreless turn": (_drop(b"SCORE 0 "), None, ["exchange-one"]),
    "no OK for a legal PLACE": (_drop(b"OK Turn"), None, ["place"]),
    "only whole lines per read": (None, whole_messages_only(CL), ["split"]),
    "only the first line of a read": (None, first_message_only(CL), ["coalesced"]),
}


@pytest.mark.parametrize("name", list(CLARKSON_BROKEN))
async def test_a_broken_clarkson_server_fails_its_checks(
    name: str, server: MeepleServer, gcide: Lexicon
) -> None:
    """Each deviation makes the checks of the RFC rules it breaks fail."""
    to_client, to_server, ids = CLARKSON_BROKEN[name]
    results = await _run_broken("clarkson", server, gcide, to_client, to_server, ids)
    by_id = {r.check.id.removeprefix("clarkson.server."): r for r in results}
    for i in ids:
        assert by_id[i].status is Status.FAIL, (i, by_id[i].status, by_id[i].detail)


async def test_a_server_that_keeps_the_connection_after_goodbye_fails_quit(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """§3.2: GOODBYE and close; a server that leaves the connection open fails."""
    results = await _run_broken("clarkson", server, gcide, None, None, ["quit"], keep_open=True)
    assert results[0].status is Status.FAIL, results[0]


async def test_nothing_listening_is_could_not_test_never_pass(gcide: Lexicon) -> None:
    """With no server at the address every check says "could not test" (or fails), none passes."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = await run_server_kit(
        "twente", "127.0.0.1", port, lexicon=gcide, wait=0.5, only=["twente.server.e00*"]
    )
    assert results
    assert all(r.status in (Status.COULD_NOT_TEST, Status.FAIL) for r in results)
    assert not any(r.kit_error for r in results)


def test_every_spectrangle_command_has_a_check() -> None:
    """Coverage: each server command and error word of Spectrangle 1.4 is named by a check."""
    text = " ".join(f"{c.section} {c.title}" for c in server_checks("spectrangle"))
    words = "connect welcome request waiting start order tiles place move skip exchange"
    words += " leaderboard left chat invalidMove invalidCommand invalidName replace skipped"
    for word in words.split(" "):
        assert word in text, word


SP = TERMINATOR["spectrangle"]
SPECTRANGLE_BROKEN: dict[str, Broken] = {
    "no welcome": (_sub(rb"^welcome", b"hello"), None, ["welcome", "welcome-chat"]),
    "errors as text": (
        _sub(rb"^invalid\w+", b"error"),
        None,
        [
            "skip-when-can-place",
            "exchange-when-can-place",
            "invalid-name",
            "invalid-command",
            "request-validated",
            "invalid-move-bonus",
            "invalid-move-hand",
            "out-of-turn",
            "coalesced",
        ],
    ),
    "a 1.3 tiles line (tiles: with a colon)": (_sub(rb"^tiles ", b"tiles: "), None, ["tiles"]),
    "no null slots in the tiles line": (
        _sub(rb" null", b""),
        None,
        ["leaderboard", "move-points-game"],
    ),
    "no waiting": (_drop(b"waiting"), None, ["waiting"]),
    "no start with": (_drop(b"start with"), None, ["start-with"]),
    "no order": (_drop(b"order"), None, ["order"]),
    "points doubled": (
        lambda m: re.sub(
            rb"^(move \S+ \S+ \d+ )(\d+)", lambda g: g[1] + str(2 * int(g[2]) + 1).encode(), m
        ),
        None,
        ["move-points", "move-points-game"],
    ),
    "moves announced as played": (_sub(rb"^move ", b"played "), None, ["move"]),
    "no chat relay": (_drop(b"chat "), None, ["chat"]),
    "no player left": (_drop(b"player "), None, ["player-left"]),
    "leaderboard worst first": (
        lambda m: (
            m
            if not m.startswith(b"game finished leaderboard ")
            else b"game finished leaderboard "
            + b" ".join(
                reversed([b" ".join(p) for p in zip(*[iter(m.split()[3:])] * 2, strict=True)])
            )
            + b"\n"
        ),
        None,
        ["leaderboard"],
    ),
    "only whole lines per read": (None, whole_messages_only(SP), ["split"]),
    "only the first line of a read": (None, first_message_only(SP), ["coalesced"]),
    "no replace": (_drop(b"replace "), None, ["replace"]),
    "1.1's <name> skipped": (
        _sub(rb"^player skipped (\S+)", rb"\1 skipped"),
        None,
        ["player-skipped"],
    ),
}


@pytest.mark.parametrize("name", list(SPECTRANGLE_BROKEN))
async def test_a_broken_spectrangle_server_fails_its_checks(
    name: str, server: MeepleServer, gcide: Lexicon
) -> None:
    """Each deviation makes the checks of the rules it breaks fail."""
    to_client, to_server, ids = SPECTRANGLE_BROKEN[name]
    results = await _run_broken("spectrangle", server, gcide, to_client, to_server, ids)
    by_id = {r.check.id.removeprefix("spectrangle.server."): r for r in results}
    for i in ids:
        assert by_id[i].status is Status.FAIL, (i, by_id[i].status, by_id[i].detail)


def _turn_stays_with_the_mover() -> Callable[[bytes], bytes]:
    """A Spectrangle server that, after a move, gives the turn to the mover again (per
    connection: the name of the last ``move`` line replaces the next tiles line's turn)."""
    mover: list[bytes] = []

    def rewrite(m: bytes) -> bytes:
        if m.startswith(b"move "):
            mover[:] = [m.split()[1]]
        elif m.startswith(b"tiles ") and mover:
            m = re.sub(rb" turn \S+", b" turn " + mover.pop(), m)
        return m

    return rewrite


async def test_a_spectrangle_server_that_keeps_the_turn_fails_tiles_after_move(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """§ tiles: after a move the tiles line gives the turn to the next player."""
    results = await _run_broken(
        "spectrangle",
        server,
        gcide,
        None,
        None,
        ["tiles-after-move"],
        per_connection=_turn_stays_with_the_mover,
    )
    assert results[0].status is Status.FAIL, results[0]
    assert "the turn went to" in results[0].detail, results[0].detail


# MUST checks whose broken server is a test of its own (a relay the tables cannot express).
ELSEWHERE = {
    "clarkson": {"quit": "test_a_server_that_keeps_the_connection_after_goodbye_fails_quit"},
    "spectrangle": {
        "tiles-after-move": "test_a_spectrangle_server_that_keeps_the_turn_fails_tiles_after_move"
    },
}


@pytest.mark.parametrize(
    ("protocol", "table"),
    [("twente", TWENTE_BROKEN), ("clarkson", CLARKSON_BROKEN), ("spectrangle", SPECTRANGLE_BROKEN)],
)
def test_every_must_check_has_a_broken_server(protocol: str, table: dict[str, Broken]) -> None:
    """Issue 23: for each MUST rule a check covers, a broken server proves it can fail."""
    broken = {i for _, _, ids in table.values() for i in ids}
    elsewhere = ELSEWHERE.get(protocol, {})
    assert all(callable(globals().get(test)) for test in elsewhere.values())
    broken |= set(elsewhere)
    checks = server_checks(protocol)
    must = {c.id.removeprefix(f"{protocol}.server.") for c in checks if c.level is Level.MUST}
    assert must - broken == set()
