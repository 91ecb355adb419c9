"""CMPN402 messages byte for byte (spec, "Server State Machine" formats), and malformed input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.protocols.cmpn402 import (
    Answer,
    ChallengeAccepted,
    ChallengeAcceptedTimes,
    ChallengeMove,
    ChallengeRejected,
    ChallengeRejectedTiles,
    CloseCode,
    EndMessage,
    EndReason,
    ExchangeMove,
    ExchangeNotice,
    ExchangeTiles,
    Invalid,
    LocalProtocolError,
    Name,
    NameRequest,
    NoChallenge,
    NoChallengeTiles,
    NoChallengeTimes,
    PassMove,
    PassNotice,
    PlayMove,
    PlayNotice,
    RemoteProtocolError,
    Start,
    decode_client,
    decode_server,
)

EMPTY_BOARD = tuple("." * 15 for _ in range(15))
T = bytes.fromhex  # readable fixtures

CLIENT = [
    (Name("Team Ω"), b"\x00" + "Team Ω".encode()),
    (PassMove(), T("02")),
    (ExchangeMove("AZ?"), T("03 01 1a 64 00 00 00 00")),
    (PlayMove(8, 7, 1, "CaT", 5), T("04 08 07 01 03 65 14 00 00 00 00 00 00 00 05")),
    (PlayMove(15, 1, 0, "A", -1), T("04 0f 01 00 01 00 00 00 00 00 00 ff ff ff ff")),
    (NoChallenge(), T("05")),
    (ChallengeMove(), T("06")),
]

SERVER = [
    (NameRequest(), T("00")),
    (PassNotice(1000, 70000), T("02 000003e8 00011170")),
    (ExchangeTiles("QU"), T("03 11 15 00 00 00 00 00")),
    (ExchangeNotice(2, 1, 2), T("03 02 00000001 00000002")),
    (
        PlayNotice(8, 8, 0, "AB", 6, 10000, 5, 6),
        T("04 08 08 00 01 02 00 00 00 00 00 00000006 00002710 00000005 00000006"),
    ),
    (NoChallengeTiles("XY"), T("05 18 19 00 00 00 00 00")),
    (NoChallengeTimes(3, 4), T("05 00000003 00000004")),
    (ChallengeAccepted(), T("07")),
    (ChallengeAcceptedTimes(3, 4), T("07 00000003 00000004")),
    (ChallengeRejected(), T("08")),
    (ChallengeRejectedTiles("E", 3, 4), T("08 05 00 00 00 00 00 00 00000003 00000004")),
    (Invalid(7, 8), T("09 00000007 00000008")),
    (EndMessage(EndReason.TIME_ENDED, 300, -5), T("0a 01 0000012c fffffffb")),
]


@pytest.mark.parametrize(("message", "data"), CLIENT)
def test_client_messages_byte_exact(message: object, data: bytes) -> None:
    """Every client message encodes to the spec's layout and decodes back."""
    assert message.encode() == data  # type: ignore[attr-defined]
    assert decode_client(data) == message


@pytest.mark.parametrize(("message", "data"), SERVER)
def test_server_messages_byte_exact(message: object, data: bytes) -> None:
    """Every server message encodes to the spec's layout and decodes back by its length."""
    assert message.encode() == data  # type: ignore[attr-defined]
    assert decode_server(data) == message


def test_start_layout() -> None:
    """START: type, order, 7 tiles, 225 board bytes, then four int32 BE."""
    board = list(EMPTY_BOARD)
    board[7] = "." * 7 + "z" + "." * 7
    start = Start(2, "ABCDEF?", tuple(board), 10, 20, 30, 40)
    data = start.encode()
    assert len(data) == 250
    assert data[:9] == T("01 02 01 02 03 04 05 06 64")
    assert data[9 + 7 * 15 + 7] == 126
    assert data[-16:] == T("0000000a 00000014 0000001e 00000028")
    assert decode_server(data) == start


@pytest.mark.parametrize(
    ("data", "answer"),
    [
        (b"", Answer.IGNORE),
        (T("0b"), Answer.IGNORE),
        (T("ff"), Answer.IGNORE),
        (T("0200"), Answer.IGNORE),
        (T("03 01 02"), Answer.INVALID),
        (T("03 00 00 00 00 00 00 00"), Answer.INVALID),
        (T("03 1b 00 00 00 00 00 00"), Answer.INVALID),
        (T("04 00 01 00 01 00 00 00 00 00 00 00 00 00 01"), Answer.INVALID),
        (T("04 10 01 00 01 00 00 00 00 00 00 00 00 00 01"), Answer.INVALID),
        (T("04 01 01 02 01 00 00 00 00 00 00 00 00 00 01"), Answer.INVALID),
        (T("04 01 01 00 00 00 00 00 00 00 00 00 00 00 01"), Answer.INVALID),
        (T("04 01 01 00 64 00 00 00 00 00 00 00 00 00 01"), Answer.INVALID),
        (T("04 01 01 00 01"), Answer.INVALID),
        (T("0500"), Answer.IGNORE),
        (T("0601"), Answer.IGNORE),
        (T("07"), Answer.IGNORE),
        (T("0a 00 00000000 00000000"), Answer.IGNORE),
    ],
)
def test_malformed_client_messages(data: bytes, answer: Answer) -> None:
    """Malformed EXCHANGE/PLAY deserve INVALID; other junk is ignored."""
    with pytest.raises(RemoteProtocolError) as info:
        decode_client(data)
    assert info.value.answer is answer


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\x00", CloseCode.POLICY_VIOLATION),
        (b"\x00" + b"x" * 65, CloseCode.POLICY_VIOLATION),
        (b"\x00\xff\xfe", CloseCode.INVALID_PAYLOAD),
        (b"\x00a\nb", CloseCode.POLICY_VIOLATION),
        (b"\x00 a", CloseCode.POLICY_VIOLATION),
    ],
)
def test_bad_names_close(data: bytes, code: CloseCode) -> None:
    """An empty, long, non-UTF-8 or unprintable name closes the connection with a reason."""
    with pytest.raises(RemoteProtocolError) as info:
        decode_client(data)
    assert info.value.answer is Answer.CLOSE
    assert info.value.close_code is code


def test_we_refuse_to_send_nonsense() -> None:
    """Encoding checks ranges: a bug on our side is a LocalProtocolError, not bad bytes."""
    for message in (
        PlayMove(0, 1, 0, "A", 0),
        PlayMove(1, 1, 2, "A", 0),
        PlayMove(1, 1, 0, "?", 0),
        ExchangeMove("ABCDEFGH"),
        PassNotice(2**31, 0),
        Start(3, "", EMPTY_BOARD, 0, 0, 0, 0),
        Name(""),
        ExchangeNotice(8, 0, 0),
    ):
        with pytest.raises(LocalProtocolError):
            message.encode()


@given(st.binary(max_size=300))
def test_random_bytes_decode_or_raise_remote_errors(data: bytes) -> None:
    """Any bytes are a message or a RemoteProtocolError, from either side."""
    for decode in (decode_client, decode_server):
        try:
            message = decode(data)
        except RemoteProtocolError:
            continue
        if decode is decode_server or not isinstance(message, Name):
            assert message.encode() == data or decode(message.encode()) == message


@given(
    st.integers(1, 15),
    st.integers(1, 15),
    st.integers(0, 1),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", min_size=1, max_size=7),
    st.integers(-(2**31), 2**31 - 1),
)
def test_play_round_trip(column: int, row: int, direction: int, tiles: str, score: int) -> None:
    """Any PLAY survives the wire, and its notice to the opponent too."""
    play = PlayMove(column, row, direction, tiles, score)
    assert decode_client(play.encode()) == play
    notice = PlayNotice(column, row, direction, tiles, score, 1, 2, 3)
    assert decode_server(notice.encode()) == notice
