"""Clarkson messages: the RFC's grammar byte for byte, liberal reading, every refusal."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.board import Board, Premium
from meeple.games.scrabble.moves import Placement
from meeple.protocols.clarkson.errors import (
    LocalProtocolError,
    RemoteProtocolError,
    UnrecognizedCommand,
)
from meeple.protocols.clarkson.framing import Line, LineFramer
from meeple.protocols.clarkson.messages import (
    BoardPush,
    Exchange,
    Goodbye,
    Hello,
    Malformed,
    Nok,
    Ok,
    Pass,
    Place,
    Quit,
    Ready,
    Score,
    ServerMessageReader,
    Starting,
    Tiles,
    Turn,
    UserChange,
    UserJoin,
    UserSet,
    Winner,
    decode_client,
    decode_server,
    is_supported_version,
)


@pytest.mark.parametrize(
    ("message", "wire"),
    [
        (
            Hello("1.0.1", "Mac OS 10.14.6", "C++", "Hunter Bashaw"),
            b"HELLO 1.0.1,Mac OS 10.14.6,C++,Hunter Bashaw\r\n",
        ),
        (Quit(), b"QUIT\r\n"),
        (Goodbye(), b"GOODBYE\r\n"),
        (Ok("Scrabble server at your service!"), b"OK Scrabble server at your service!\r\n"),
        (Ok(), b"OK\r\n"),
        (Nok("Unsupported version!"), b"NOK Unsupported version!\r\n"),
        (UserSet("Graham"), b"USERSET Graham\r\n"),
        (UserChange("192.168.1.14", "Graham"), b"USERCHANGE 192.168.1.14 Graham\r\n"),
        (UserJoin("Jeanna"), b"USERJOIN Jeanna\r\n"),
        (Ready(), b"READY\r\n"),
        (Starting(), b"STARTING\r\n"),
        (Score(10, "Jeanna"), b"SCORE 10 Jeanna\r\n"),
        (Tiles("ABCDEFG"), b"TILES ABCDEFG\r\n"),
        (Tiles("AB"), b"TILES AB\r\n"),
        (Turn("Hunter"), b"TURN Hunter\r\n"),
        (
            Place(
                (
                    Placement(7, 5, "H"),
                    Placement(7, 6, "E"),
                    Placement(7, 8, "L"),
                    Placement(7, 9, "O"),
                )
            ),
            b"PLACE (H,5,7) (E,6,7) (L,8,7) (O,9,7)\r\n",
        ),
        (Pass(), b"PASS\r\n"),
        (Exchange("A"), b"EXCHANGE A\r\n"),
        (Exchange(), b"EXCHANGE\r\n"),
        (Winner(50, "Marzieh"), b"WINNER 50 Marzieh\r\n"),
    ],
)
def test_every_message_encodes_as_the_rfc_shows(message: object, wire: bytes) -> None:
    """§3.1–§3.17 and §4.1's examples, byte for byte."""
    assert message.encode() == wire  # type: ignore[attr-defined]


def test_client_lines_decode_back() -> None:
    """Every client message reads back from its own bytes (x is the column, y the row)."""
    for m in (Quit(), Ready(), Pass(), Exchange(), Exchange("Q"), UserSet("Bob")):
        assert decode_client(m.encode().decode().strip()) == m
    place = decode_client("PLACE (H,5,7) (E,6,7)")
    assert place == Place((Placement(y=7, x=5, tile="H"), Placement(y=7, x=6, tile="E")))


def test_liberal_reading() -> None:
    """Lower-case commands and letters, blanks inside cells, commas between, leading zeros."""
    assert decode_client("ready") == Ready()
    assert decode_client("place ( h , 05 , 7 ),(e,6,7)") == Place(
        (Placement(7, 5, "H"), Placement(7, 6, "E"))
    )
    assert decode_client("exchange a") == Exchange("A")
    assert decode_client("EXCHANGE A B") == Exchange("AB")
    assert decode_client("HELLO 1.0") == Hello("1.0", "", "", "")
    assert decode_client("QUIT now") == Quit()


@pytest.mark.parametrize(
    "line",
    [
        "READY now",
        "PASS 1",
        "PLACE",
        "PLACE (A,15,7)",
        "PLACE (A,-1,7)",
        "PLACE (1,7,7)",
        "PLACE (AB,7,7)",
        "PLACE (A,7)",
        "PLACE A,7,7",
        "EXCHANGE 1",
        "USERSET",
        "USERSET 1abc",
        "USERSET two words",
        "USERSET " + "a" * 33,
    ],
)
def test_malformed_client_lines_are_remote_errors(line: str) -> None:
    """Each gives a RemoteProtocolError whose description is the NOK text."""
    with pytest.raises(RemoteProtocolError) as info:
        decode_client(line)
    assert info.value.description


def test_unknown_command() -> None:
    """§3.4: an unknown command is 'unrecognized command'; server messages from a client too."""
    for line in ("FOOBAR", "TURN x", "GOODBYE"):
        with pytest.raises(UnrecognizedCommand) as info:
            decode_client(line)
        assert info.value.description == "unrecognized command"


def test_versions() -> None:
    """ERRATA: 1.0.1, 1.0 and 1.0.x are supported; others not."""
    assert all(is_supported_version(v) for v in ("1.0.1", "1.0", "1.0.7", "1.0."))
    assert not any(is_supported_version(v) for v in ("1.4.7", "2.0.1", "", "x", "1"))


def test_local_errors() -> None:
    """We never send what the grammar forbids."""
    bad = [
        Score(-1, "A"),
        Score(1, "two words"),
        Tiles("ABCDEFGH"),
        Tiles("ab"),
        Place(()),
        Exchange(""),
        Hello("x", "a", "b", "c"),
        Hello("1.0.1", "a,b", "c", "d"),
        UserSet("1x"),
    ]
    for message in bad:
        with pytest.raises(LocalProtocolError):
            message.encode()


def test_boardpush_grammar_and_round_trip() -> None:
    """ERRATA: BOARDPUSH, 15 rows of 15 (X,m) cells with single spaces, an empty line."""
    board = Board()
    board.place(7, 7, "H")
    board.place(8, 7, "I")
    wire = BoardPush.from_board(board).encode()
    rows = wire.split(b"\r\n")
    assert rows[0] == b"BOARDPUSH"
    assert rows[16] == b""
    assert rows[17] == b""
    assert len(rows) == 18
    assert rows[1].split(b" ")[0] == b"(0,4)"
    assert rows[1].split(b" ")[3] == b"(0,1)"
    assert rows[8].split(b" ")[7:9] == [b"(H,3)", b"(I,0)"]
    assert rows[2].split(b" ")[5] == b"(0,2)"
    reader = ServerMessageReader()
    framer = LineFramer()
    out = [m for line in framer.receive_data(wire) for m in reader.feed(line)]
    assert len(out) == 1
    assert isinstance(out[0], BoardPush)
    assert out[0].to_board() == board
    assert out[0].premiums[0][0] is Premium.TRIPLE_WORD


def test_reader_reports_a_broken_board_and_reads_on() -> None:
    """A row that is not a row ends the board as Malformed; the line is still read."""
    reader = ServerMessageReader()
    assert reader.feed(Line("BOARDPUSH")) == []
    out = reader.feed(Line("TURN Bob"))
    assert isinstance(out[0], Malformed)
    assert out[1] == Turn("Bob")


def test_server_lines_decode() -> None:
    """Server messages read back, descriptions kept whole."""
    assert decode_server("NOK name already taken :P") == Nok("name already taken :P")
    assert decode_server("SCORE 7 Hunter") == Score(7, "Hunter")
    assert decode_server("USERCHANGE 127.0.0.1 Hunter") == UserChange("127.0.0.1", "Hunter")
    assert decode_server("TILES") == Tiles("")
    with pytest.raises(RemoteProtocolError):
        decode_server("SCORE x Hunter")


@settings(max_examples=300)
@given(st.text(max_size=80))
def test_decoding_any_text_raises_only_remote_errors(text: str) -> None:
    """Anything a peer sends reads as a message or a RemoteProtocolError, never a crash."""
    for decode in (decode_client, decode_server):
        with contextlib.suppress(RemoteProtocolError):
            decode(text.strip() or "X")


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 14), st.integers(0, 14), st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        ),
        min_size=1,
        max_size=7,
    )
)
def test_place_round_trips(cells: list[tuple[int, int, str]]) -> None:
    """Any PLACE we encode decodes to the same placements."""
    place = Place(tuple(Placement(y, x, t) for x, y, t in cells))
    assert decode_client(place.encode().decode().strip()) == place
