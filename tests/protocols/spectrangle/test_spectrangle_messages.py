"""Messages: byte-exact encode/decode (the transcript's lines and every message type),
liberal reading, and the error word each bad line deserves."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.games.spectrangle import Tile
from meeple.protocols.spectrangle import (
    Chat,
    ChatFrom,
    Connect,
    ErrorReply,
    ErrorWord,
    Exchange,
    GameFinished,
    Hand,
    Move,
    Order,
    Place,
    PlayerLeft,
    PlayerSkipped,
    RemoteProtocolError,
    Replace,
    Request,
    Skip,
    SkipNotice,
    StartWith,
    Tiles,
    Waiting,
    Welcome,
    decode_client,
    decode_server,
    is_valid_name,
)


def t(code: str) -> Tile:
    return Tile.parse(code)


# Read at collection time (parametrize needs the lines before fixtures exist): the
# same ../shared as tests/conftest.py's SHARED.
TRANSCRIPT = (
    Path(os.environ.get("MEEPLE_SHARED", Path(__file__).resolve().parents[4] / "shared"))
    / "transcripts"
    / "spectrangle-3p-game.log"
)


def _transcript_lines(outgoing: bool) -> list[str]:
    """The distinct lines one direction of the log carries (parametrize needs them at
    collection time, before fixtures exist)."""
    if not TRANSCRIPT.exists():
        return []
    found: set[str] = set()
    for raw in TRANSCRIPT.read_text(encoding="utf-8").splitlines():
        parts = raw.split(" ", 3)
        if len(parts) == 4 and parts[2] == ("C>S" if outgoing else "S>C"):
            found.update(ast.literal_eval(parts[3]).decode("utf-8").split("\n")[:-1])
    return sorted(found)


@pytest.mark.parametrize("line", _transcript_lines(outgoing=True))
def test_transcript_client_lines_round_trip(line: str) -> None:
    """Every distinct client line of the log decodes and encodes back to its bytes."""
    assert decode_client(line).encode() == line.encode() + b"\n"


@pytest.mark.parametrize("line", _transcript_lines(outgoing=False))
def test_transcript_server_lines_round_trip(line: str) -> None:
    """Every distinct server line decodes; meeple writes it back byte for byte, except
    the leaderboard's trailing space, which meeple does not send."""
    assert decode_server(line).encode() == line.rstrip(" ").encode() + b"\n"


def test_transcript_has_lines(spectrangle_transcript: list[Any]) -> None:
    """Guard: the parametrized tests above are not vacuous (the fixture fails in CI if the
    transcript is missing)."""
    assert len(_transcript_lines(True)) > 10
    assert len(_transcript_lines(False)) > 50


HAND = Hand.of("p1", [t("WWW1"), t("RGY3")])
CLIENT_MESSAGES = [
    (Connect("p1"), b"connect p1\n"),
    (Connect("p1", ("chat",)), b"connect p1 chat\n"),
    (Request(2), b"request 2\n"),
    (Request(4), b"request 4\n"),
    (Place(t("WWW1"), 11), b"place WWW1 on 11\n"),
    (Skip(), b"skip\n"),
    (Exchange(t("WWW2")), b"exchange WWW2\n"),
    (Chat("hello  there"), b"chat hello  there\n"),
]
SERVER_MESSAGES = [
    (Welcome(), b"welcome\n"),
    (Welcome(("chat",)), b"welcome chat\n"),
    (Waiting(("p1", "p2")), b"waiting p1 p2\n"),
    (StartWith(("p1", "p2")), b"start with p1 p2\n"),
    (Order(("p2", "p1")), b"order p2 p1\n"),
    (
        Tiles((HAND, Hand.of("p2", [])), "p1"),
        b"tiles p1 WWW1 RGY3 null null p2 null null null null turn p1\n",
    ),
    (Tiles((HAND,), "p1", must_skip=True), b"tiles p1 WWW1 RGY3 null null skip p1\n"),
    (SkipNotice("p1"), b"skip p1\n"),
    (PlayerSkipped("p1"), b"player skipped p1\n"),
    (Replace("p1", t("YYR4"), t("PPR4")), b"replace p1 YYR4 with PPR4\n"),
    (Move("p3", t("GGG6"), 0, 6), b"move p3 GGG6 0 6\n"),
    (GameFinished((("p3", 97), ("p1", -5))), b"game finished leaderboard p3 97 p1 -5\n"),
    (PlayerLeft("p2"), b"player p2 left\n"),
    (ChatFrom("p1", "hi all"), b"chat p1 hi all\n"),
    (ErrorReply(ErrorWord.INVALID_MOVE), b"invalidMove\n"),
    (ErrorReply(ErrorWord.INVALID_COMMAND), b"invalidCommand\n"),
    (ErrorReply(ErrorWord.INVALID_NAME), b"invalidName\n"),
]


@pytest.mark.parametrize(("message", "wire"), CLIENT_MESSAGES)
def test_client_message_bytes(message: object, wire: bytes) -> None:
    """Each client command encodes to the spec's bytes and decodes back to itself."""
    assert isinstance(message, Connect | Request | Place | Skip | Exchange | Chat)
    assert message.encode() == wire
    assert decode_client(wire.decode().rstrip("\n")) == message


@pytest.mark.parametrize(("message", "wire"), SERVER_MESSAGES)
def test_server_message_bytes(message: object, wire: bytes) -> None:
    """Each server line encodes to the spec's bytes and decodes back to itself."""
    encoded = message.encode()  # type: ignore[attr-defined]
    assert encoded == wire
    assert decode_server(wire.decode().rstrip("\n")) == message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("CONNECT p1 Chat", Connect("p1", ("chat",))),
        ("  request   3  ", Request(3)),
        ("place rgb4 on 11", Place(t("RGB4"), 11)),
        ("place RGB4 11", Place(t("RGB4"), 11)),
        ("Skip", Skip()),
        ("chat   spaced out ", Chat("spaced out")),
    ],
)
def test_client_lines_read_liberally(line: str, expected: object) -> None:
    """Case, extra spaces and a missing ``on`` are tolerated."""
    assert decode_client(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("tiles: p1 WWW1 null null null turn p1", Tiles((Hand.of("p1", [t("WWW1")]),), "p1")),
        ("tiles p1 WWW1 p2 RGY3 skip p2", Tiles((Hand.of("p1", [t("WWW1")]),
                                                 Hand.of("p2", [t("RGY3")])), "p2", True)),
        ("game finished leaderboard p3 97 p2 74 ", GameFinished((("p3", 97), ("p2", 74)))),
        ("INVALIDMOVE", ErrorReply(ErrorWord.INVALID_MOVE)),
        ("welcome CHAT", Welcome(("chat",))),
    ],
)  # fmt: skip
def test_server_lines_read_liberally(line: str, expected: object) -> None:
    """The spec's ``tiles:``, 1.3 short hands, trailing spaces and any case are read."""
    assert decode_server(line) == expected


@pytest.mark.parametrize(
    ("line", "word"),
    [
        ("connect", ErrorWord.INVALID_NAME),
        ("connect RGB4", ErrorWord.INVALID_NAME),
        ("connect null", ErrorWord.INVALID_NAME),
        ("connect " + "x" * 33, ErrorWord.INVALID_NAME),
        ("connect a\x07b", ErrorWord.INVALID_NAME),
        ("request 5", ErrorWord.INVALID_COMMAND),
        ("request 1", ErrorWord.INVALID_COMMAND),
        ("request three", ErrorWord.INVALID_COMMAND),
        ("request", ErrorWord.INVALID_COMMAND),
        ("place RGB4 on", ErrorWord.INVALID_COMMAND),
        ("place RGB9 on 3", ErrorWord.INVALID_MOVE),
        ("place RGB4 on x", ErrorWord.INVALID_MOVE),
        ("place RGB4 on -1", ErrorWord.INVALID_MOVE),
        ("exchange XYZ1", ErrorWord.INVALID_MOVE),
        ("exchange", ErrorWord.INVALID_COMMAND),
        ("skip now", ErrorWord.INVALID_COMMAND),
        ("chat", ErrorWord.INVALID_COMMAND),
        ("chat   ", ErrorWord.INVALID_COMMAND),
        ("hello", ErrorWord.INVALID_COMMAND),
        ("\ufffd\ufffd", ErrorWord.INVALID_COMMAND),
    ],
)
def test_bad_client_lines_get_the_right_error_word(line: str, word: ErrorWord) -> None:
    """invalidName for a bad name, invalidMove for an unreadable move, else invalidCommand."""
    with pytest.raises(RemoteProtocolError) as caught:
        decode_client(line)
    assert caught.value.word is word


@pytest.mark.parametrize(
    "line",
    [
        "tiles p1 WWW1 null null null",
        "tiles p1 WWW1 null null null turn",
        "move p1 WWW1 x 3",
        "move p1 WWW1 3 -3",
        "replace p1 WWW1 by RGB4",
        "game finished leaderboard p1",
        "start p1",
        "player p1 joined",
        "chat p1",
        "nonsense",
    ],
)
def test_bad_server_lines_are_refused(line: str) -> None:
    """A server line meeple cannot read raises RemoteProtocolError."""
    with pytest.raises(RemoteProtocolError):
        decode_server(line)


def test_name_rules() -> None:
    """1–32 printable characters without spaces, not reserved, not a tile."""
    assert is_valid_name("p1")
    assert is_valid_name("Zoë")
    assert is_valid_name("x" * 32)
    for bad in ("", "a b", "x" * 33, "turn", "Skip", "null", "RRR6", "tab\t", "nl\n"):
        assert not is_valid_name(bad)


def test_constructors_refuse_unencodable_messages() -> None:
    """A message that could not be sent cannot be built."""
    with pytest.raises(ValueError, match="2–4"):
        Request(5)
    with pytest.raises(ValueError, match="name"):
        Connect("two words")
    with pytest.raises(ValueError, match="one non-blank line"):
        Chat("a\nb")
    with pytest.raises(ValueError, match="slots"):
        Hand("p1", (None,))
    with pytest.raises(ValueError, match="at most"):
        Hand.of("p1", [t("WWW1")] * 5)


@given(st.text(max_size=60))
def test_decoding_any_text_raises_only_protocol_errors(text: str) -> None:
    """Random text either decodes or raises RemoteProtocolError, never anything else."""
    for decode in (decode_client, decode_server):
        try:
            message = decode(text)
        except RemoteProtocolError:
            continue
        assert decode(message.to_line()) == message
