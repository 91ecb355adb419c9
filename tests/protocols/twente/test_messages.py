"""Twente messages: the spec's examples byte for byte, round trips, and error codes."""

from __future__ import annotations

import pytest
from hypothesis import given

from meeple.games.scrabble.board import Direction
from meeple.protocols.twente import (
    Announce,
    Command,
    Error,
    ErrorCode,
    Flag,
    GameOver,
    GameOverReason,
    InformQueue,
    InformSwap,
    InformWord,
    LocalProtocolError,
    MakeSwap,
    MakeWord,
    Message,
    NewTiles,
    NotifyChat,
    NotifyTurn,
    PlayerDisconnected,
    RemoteProtocolError,
    RequestGame,
    SendChat,
    StartGame,
    Welcome,
    decode,
    parse,
)
from meeple.protocols.twente.messages import CLIENT_COMMANDS, SERVER_COMMANDS

from .strategies import all_messages

E = ErrorCode
ACROSS, DOWN = Direction.ACROSS, Direction.DOWN
WIN, DISCONNECT = GameOverReason.WIN, GameOverReason.DISCONNECT

# Every example of the spec's "Commands" section (with the ERRATA fixes: REQUESTGAME
# for 3 players, GAMEOVER printed as INFORMMOVE), plus the ERRATA's pass.
SPEC_EXAMPLES: list[tuple[bytes, Message]] = [
    (b"ANNOUNCE\x1fAlice\x1e", Announce("Alice")),
    (b"ANNOUNCE\x1fAlice\x1fCHAT\x1e", Announce("Alice", frozenset({Flag.CHAT}))),
    (b"WELCOME\x1fAlice\x1e", Welcome("Alice")),
    (b"WELCOME\x1fAlice\x1fCHAT\x1e", Welcome("Alice", frozenset({Flag.CHAT}))),
    (
        b"WELCOME\x1fAlice\x1fCHAT\x1fTEAMPLAY\x1e",
        Welcome("Alice", frozenset({Flag.CHAT, Flag.TEAMPLAY})),
    ),
    (b"REQUESTGAME\x1e", RequestGame()),
    (b"REQUESTGAME\x1f2\x1e", RequestGame(2)),
    (b"REQUESTGAME\x1f3\x1e", RequestGame(3)),
    (b"INFORMQUEUE\x1f1\x1f2\x1e", InformQueue(1, 2)),
    (b"INFORMQUEUE\x1f2\x1f2\x1e", InformQueue(2, 2)),
    (b"STARTGAME\x1fAlice\x1fBob\x1e", StartGame(("Alice", "Bob"))),
    (b"STARTGAME\x1fAlice\x1fBob\x1fCharlie\x1e", StartGame(("Alice", "Bob", "Charlie"))),
    (
        b"STARTGAME\x1fAlice\x1fBob\x1fCharlie\x1fDavid\x1e",
        StartGame(("Alice", "Bob", "Charlie", "David")),
    ),
    (b"NOTIFYTURN\x1f0\x1fBob\x1e", NotifyTurn(False, "Bob")),
    (b"NOTIFYTURN\x1f1\x1fAlice\x1e", NotifyTurn(True, "Alice")),
    (b"MAKEMOVE\x1fWORD\x1fC10\x1fH\x1fDOg\x1e", MakeWord(2, 9, ACROSS, "DOg")),
    (b"MAKEMOVE\x1fWORD\x1fA11\x1fV\x1fAQUA\x1e", MakeWord(0, 10, DOWN, "AQUA")),
    (b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fDOG\x1e", MakeWord(7, 7, ACROSS, "DOG")),
    (b"MAKEMOVE\x1fSWAP\x1fPQG\x1e", MakeSwap("PQG")),
    (b"MAKEMOVE\x1fSWAP\x1fXMN!\x1e", MakeSwap("XMN!")),
    (b"MAKEMOVE\x1fSWAP\x1f\x1e", MakeSwap("")),
    (b"NEWTILES\x1fAC!A\x1e", NewTiles("AC!A")),
    (b"NEWTILES\x1fHFK\x1e", NewTiles("HFK")),
    (
        b"INFORMMOVE\x1fALICE\x1fWORD\x1fC10\x1fH\x1fDOg\x1e",
        InformWord("ALICE", 2, 9, ACROSS, "DOg"),
    ),
    (b"INFORMMOVE\x1fBOB\x1fWORD\x1fA11\x1fV\x1fAQUA\x1e", InformWord("BOB", 0, 10, DOWN, "AQUA")),
    (b"INFORMMOVE\x1fALICE\x1fSWAP\x1f3\x1e", InformSwap("ALICE", 3)),
    (b"INFORMMOVE\x1fBOB\x1fSWAP\x1f4\x1e", InformSwap("BOB", 4)),
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1f0\x1e", InformSwap("Bob", 0)),
    (b"ERROR\x1fE001\x1e", Error(E.NAME_TAKEN)),
    (b"ERROR\x1fE006\x1e", Error(E.UNKNOWN_WORD)),
    (b"ERROR\x1fE010\x1f2\x1e", Error(E.WRONG_NUMBER_OF_PLAYERS, 2)),
    (
        b"GAMEOVER\x1fWIN\x1fAlice\x1f257\x1fBob\x1f332\x1e",
        GameOver(WIN, (("Alice", 257), ("Bob", 332))),
    ),
    (
        b"GAMEOVER\x1fWIN\x1fAlice\x1f225\x1fBob\x1f241\x1fCharlie\x1f226\x1e",
        GameOver(WIN, (("Alice", 225), ("Bob", 241), ("Charlie", 226))),
    ),
    (
        b"GAMEOVER\x1fWIN\x1fAlice\x1f162\x1fBob\x1f174\x1fCharlie\x1f197\x1fDavid\x1f200\x1e",
        GameOver(WIN, (("Alice", 162), ("Bob", 174), ("Charlie", 197), ("David", 200))),
    ),
    (
        b"GAMEOVER\x1fDISCONNECT\x1fAlice\x1f0\x1fBob\x1f174\x1fCharlie\x1f197\x1fDavid\x1f200\x1e",
        GameOver(DISCONNECT, (("Alice", 0), ("Bob", 174), ("Charlie", 197), ("David", 200))),
    ),
    (b"PLAYERDISCONNECTED\x1fAlice\x1e", PlayerDisconnected("Alice")),
    (b"SENDCHAT\x1fHI\x1e", SendChat("HI")),
    (b"NOTIFYCHAT\x1fALICE\x1fHI\x1e", NotifyChat("ALICE", "HI")),
]


@pytest.mark.parametrize(("data", "message"), SPEC_EXAMPLES)
def test_spec_example_decodes(data: bytes, message: Message) -> None:
    """Each spec example decodes to its message."""
    assert parse(data) == message


@pytest.mark.parametrize(("data", "message"), SPEC_EXAMPLES)
def test_spec_example_encodes_byte_exact(data: bytes, message: Message) -> None:
    """Each message encodes to exactly the spec's bytes."""
    assert message.encode() == data


def test_every_command_has_an_example() -> None:
    """The examples cover every command of the spec, and every error code exists."""
    assert {m.command for _, m in SPEC_EXAMPLES} == set(Command)
    assert [c.value for c in ErrorCode] == [f"E{n:03}" for n in range(1, 16)]
    assert all(c.description for c in ErrorCode)


def test_command_directions() -> None:
    """ERROR goes both ways; every other command one way (spec "Commands")."""
    assert {Command.ERROR} == CLIENT_COMMANDS & SERVER_COMMANDS
    assert set(Command) == CLIENT_COMMANDS | SERVER_COMMANDS


@given(all_messages)
def test_round_trip(message: Message) -> None:
    """Every valid message survives encode then decode unchanged."""
    assert parse(message.encode()) == message


# --- liberal reading ------------------------------------------------------------------

LIBERAL: list[tuple[bytes, Message]] = [
    (b"announce\x1fAlice\x1fchat\x1e", Announce("Alice", frozenset({Flag.CHAT}))),
    (b"ANNOUNCE\x1fAlice\x1fCHAT\x1fCHAT\x1e", Announce("Alice", frozenset({Flag.CHAT}))),
    (b"ANNOUNCE\x1fAlice\x1fFUTURE\x1fCHAT\x1e", Announce("Alice", frozenset({Flag.CHAT}))),
    (b"ANNOUNCE\x1fAlice\x1f\x1e", Announce("Alice")),
    (b"RequestGame\x1f\x1e", RequestGame()),
    (b"MAKEMOVE\x1fword\x1fh8\x1fv\x1fDOG\x1e", MakeWord(7, 7, DOWN, "DOG")),
    (b"MAKEMOVE\x1fPASS\x1e", MakeSwap("")),
    (b"MAKEMOVE\x1fpass\x1f\x1e", MakeSwap("")),
    (b"MAKEMOVE\x1fSWAP\x1f\x1e\r\n", MakeSwap("")),
    (b"NEWTILES\x1e", NewTiles("")),
    (b"ERROR\x1fe003\x1fsome text\x1e", Error(E.INVALID_ARGUMENT)),
    (b"ERROR\x1fE010\x1e", Error(E.WRONG_NUMBER_OF_PLAYERS)),
    (b"gameover\x1fwin\x1fA\x1f-5\x1fB\x1f10\x1e", GameOver(WIN, (("A", -5), ("B", 10)))),
    # issue 31: a server that names the swapped tiles where the spec has their count.
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1fPQG\x1e", InformSwap("Bob", 3)),
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1fxmn!\x1e", InformSwap("Bob", 4)),
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1f\x1e", InformSwap("Bob", 0)),
]


@pytest.mark.parametrize(("data", "message"), LIBERAL)
def test_liberal_reading(data: bytes, message: Message) -> None:
    """Case, repeated/unknown flags, empty optional fields, PASS and swapped tiles named
    for their count are accepted."""
    assert parse(data) == message


@pytest.mark.parametrize(
    ("message", "data"),
    [
        (RequestGame(), b"REQUESTGAME\x1e"),
        (
            Announce("Al", frozenset({Flag.TEAMPLAY, Flag.CHAT})),
            b"ANNOUNCE\x1fAl\x1fCHAT\x1fTEAMPLAY\x1e",
        ),
        (MakeSwap(""), b"MAKEMOVE\x1fSWAP\x1f\x1e"),
    ],
)
def test_strict_canonical_sending(message: Message, data: bytes) -> None:
    """We always send one form: flags in a fixed order, a pass as SWAP with no tiles."""
    assert message.encode() == data


# --- errors ---------------------------------------------------------------------------

MALFORMED: list[tuple[bytes, ErrorCode]] = [
    (b"HELLO\x1fAlice\x1e", E.UNKNOWN_COMMAND),
    (b"\x1fAlice\x1e", E.UNKNOWN_COMMAND),
    (b"ANNOUNCE\x1e", E.INVALID_ARGUMENT),
    (b"ANNOUNCE\x1f\x1e", E.INVALID_ARGUMENT),
    (b"ANNOUNCE\x1f Alice\x1e", E.INVALID_ARGUMENT),
    (b"ANNOUNCE\x1fA\tB\x1e", E.INVALID_ARGUMENT),
    (b"ANNOUNCE\x1f" + b"x" * 33 + b"\x1e", E.INVALID_ARGUMENT),
    (b"REQUESTGAME\x1fAlice\x1fCHAT\x1e", E.INVALID_ARGUMENT),
    (b"REQUESTGAME\x1ftwo\x1e", E.INVALID_ARGUMENT),
    (b"REQUESTGAME\x1f5\x1e", E.INVALID_ARGUMENT),
    (b"REQUESTGAME\x1f1\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fJUMP\x1fA1\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fSWAP\x1e", E.INVALID_ARGUMENT),  # spec E003 example: tiles missing
    (b"MAKEMOVE\x1fSWAP\x1fpqg\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fSWAP\x1fAB?\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fSWAP\x1fABCDEFGH\x1e", E.TILES_NOT_ON_RACK),
    (b"MAKEMOVE\x1fPASS\x1fAB\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fWORD\x1fC10\x1fD\x1fDOG\x1e", E.INVALID_ARGUMENT),  # spec E003 example
    (b"MAKEMOVE\x1fWORD\x1fC16\x1fH\x1fDOG\x1e", E.INVALID_COORDINATE),  # spec E004 example
    (b"MAKEMOVE\x1fWORD\x1fP1\x1fH\x1fDOG\x1e", E.INVALID_COORDINATE),
    (b"MAKEMOVE\x1fWORD\x1f10C\x1fH\x1fDOG\x1e", E.INVALID_COORDINATE),
    (b"MAKEMOVE\x1fWORD\x1fA0\x1fH\x1fDOG\x1e", E.INVALID_COORDINATE),
    (b"MAKEMOVE\x1fWORD\x1fA00001\x1fH\x1fDOG\x1e", E.INVALID_COORDINATE),
    (b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fD0G\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fDO!\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1f\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fWORD\x1fA1\x1fH\x1f" + b"A" * 16 + b"\x1e", E.WORD_DOES_NOT_FIT),
    (b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1e", E.INVALID_ARGUMENT),
    (b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fDOG\x1fX\x1e", E.INVALID_ARGUMENT),
    (b"SENDCHAT\x1e", E.INVALID_ARGUMENT),
    (b"SENDCHAT\x1f\x1e", E.INVALID_ARGUMENT),
    (b"SENDCHAT\x1fa\x1fb\x1e", E.INVALID_ARGUMENT),
    (b"SENDCHAT\x1f" + b"x" * 1001 + b"\x1e", E.INVALID_ARGUMENT),
    (b"WELCOME\x1e", E.INVALID_ARGUMENT),
    (b"INFORMQUEUE\x1f3\x1f2\x1e", E.INVALID_ARGUMENT),
    (b"INFORMQUEUE\x1f1\x1e", E.INVALID_ARGUMENT),
    (b"INFORMQUEUE\x1f1\x1f9999999\x1e", E.INVALID_ARGUMENT),
    (b"STARTGAME\x1fAlice\x1e", E.INVALID_ARGUMENT),
    (b"STARTGAME\x1fA\x1fB\x1fC\x1fD\x1fE\x1e", E.INVALID_ARGUMENT),
    (b"STARTGAME\x1fAlice\x1fAlice\x1e", E.INVALID_ARGUMENT),
    (b"NOTIFYTURN\x1f2\x1fAlice\x1e", E.INVALID_ARGUMENT),
    (b"NOTIFYTURN\x1f1\x1e", E.INVALID_ARGUMENT),
    (b"NEWTILES\x1fab\x1e", E.INVALID_ARGUMENT),
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1f8\x1e", E.INVALID_ARGUMENT),
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1fABCDEFGH\x1e", E.INVALID_ARGUMENT),  # 8 tiles
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1f3A\x1e", E.INVALID_ARGUMENT),
    (b"INFORMMOVE\x1fBob\x1fSWAP\x1e", E.INVALID_ARGUMENT),
    (b"INFORMMOVE\x1fBob\x1fJUMP\x1f3\x1e", E.INVALID_ARGUMENT),
    (b"INFORMMOVE\x1fBob\x1fWORD\x1fZ9\x1fH\x1fDOG\x1e", E.INVALID_COORDINATE),
    (b"ERROR\x1e", E.INVALID_ARGUMENT),
    (b"ERROR\x1fE016\x1e", E.INVALID_ARGUMENT),
    (b"GAMEOVER\x1fDRAW\x1fA\x1f1\x1fB\x1f2\x1e", E.INVALID_ARGUMENT),
    (b"GAMEOVER\x1fWIN\x1fA\x1f1\x1fB\x1e", E.INVALID_ARGUMENT),
    (b"GAMEOVER\x1fWIN\x1fA\x1f1\x1e", E.INVALID_ARGUMENT),
    (b"GAMEOVER\x1fWIN\x1fA\x1fone\x1fB\x1f2\x1e", E.INVALID_ARGUMENT),
    (b"PLAYERDISCONNECTED\x1e", E.INVALID_ARGUMENT),
    (b"NOTIFYCHAT\x1fAlice\x1e", E.INVALID_ARGUMENT),
]


@pytest.mark.parametrize(("data", "code"), MALFORMED)
def test_malformed_input_carries_its_error_code(data: bytes, code: ErrorCode) -> None:
    """Malformed messages raise RemoteProtocolError with the spec's code, nothing else."""
    with pytest.raises(RemoteProtocolError) as info:
        parse(data)
    assert info.value.code is code


def test_decode_empty_fields() -> None:
    """No fields at all is an unknown command."""
    with pytest.raises(RemoteProtocolError) as info:
        decode([])
    assert info.value.code is E.UNKNOWN_COMMAND


@pytest.mark.parametrize(
    "data", [b"REQUESTGAME", b"REQUESTGAME\x1eREQUESTGAME\x1e", b"\x1e", b"\xff\x1e"]
)
def test_parse_wants_exactly_one_whole_message(data: bytes) -> None:
    """parse() refuses partial data, two messages, nothing, or undecodable bytes."""
    with pytest.raises(RemoteProtocolError):
        parse(data)


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (Announce(""), E.INVALID_ARGUMENT),
        (Announce("x\x1fy"), E.INVALID_ARGUMENT),
        (RequestGame(7), E.INVALID_ARGUMENT),
        (MakeWord(15, 0, ACROSS, "DOG"), E.INVALID_COORDINATE),
        (MakeWord(0, -1, ACROSS, "DOG"), E.INVALID_COORDINATE),
        (MakeWord(0, 0, ACROSS, "DO G"), E.INVALID_ARGUMENT),
        (MakeSwap("abc"), E.INVALID_ARGUMENT),
        (SendChat(""), E.INVALID_ARGUMENT),
        (SendChat("a\x1eb"), E.INVALID_ARGUMENT),
        (InformQueue(3, 2), E.INVALID_ARGUMENT),
        (StartGame(("Alice",)), E.INVALID_ARGUMENT),
        (NewTiles("ABCDEFGH"), E.TILES_NOT_ON_RACK),
        (InformSwap("Bob", -1), E.INVALID_ARGUMENT),
        (GameOver(WIN, (("A", 1), ("A", 2))), E.INVALID_ARGUMENT),
        (GameOver(WIN, (("A", 10**6), ("B", 2))), E.INVALID_ARGUMENT),
        (Error(E.WRONG_NUMBER_OF_PLAYERS), E.INVALID_ARGUMENT),
        (Error(E.WRONG_NUMBER_OF_PLAYERS, 9), E.INVALID_ARGUMENT),
        (Error(E.NAME_TAKEN, 2), E.INVALID_ARGUMENT),
        (NotifyChat("Alice", ""), E.INVALID_ARGUMENT),
        (PlayerDisconnected(""), E.INVALID_ARGUMENT),
        (NotifyTurn(True, ""), E.INVALID_ARGUMENT),
        (InformWord("Bob", 0, 0, DOWN, ""), E.INVALID_ARGUMENT),
        (Welcome("A" * 33), E.INVALID_ARGUMENT),
    ],
)
def test_strict_sending_refuses_bad_values(message: Message, code: ErrorCode) -> None:
    """encode() raises LocalProtocolError for a value the spec does not allow."""
    with pytest.raises(LocalProtocolError) as info:
        message.encode()
    assert info.value.code is code


def test_e010_carries_the_queue_player_count() -> None:
    """spec E010: the error names the player count of the queue that exists."""
    assert Error(E.WRONG_NUMBER_OF_PLAYERS, 3).encode() == b"ERROR\x1fE010\x1f3\x1e"
    assert parse(b"ERROR\x1fE010\x1f3\x1e") == Error(E.WRONG_NUMBER_OF_PLAYERS, 3)


def test_helpers() -> None:
    """Properties that translate the wire into meaning."""
    assert RequestGame().player_count == 2
    assert RequestGame(4).player_count == 4
    assert MakeSwap("").is_pass
    assert not MakeSwap("A").is_pass
    assert MakeWord(7, 7, ACROSS, "DOG").square == "H8"
    assert InformWord("Bob", 14, 14, DOWN, "DOG").square == "O15"
