"""The eleven CMPN402 message types as frozen dataclasses, with their exact byte layouts.

One WebSocket binary message is one protocol message (spec, "Websockets"): a type
byte (uint8, Table 1) then fixed fields — uint8, int32 big-endian, 7-byte tile fields
(Tile-Format-1 or -2, 0-padded) and the 225-byte board. A type has different
layouts depending on who sends it and to whom (spec, "Server State Machine"), so
there are two families:

- client → server (:data:`ClientMessage`): ``Name``, ``PassMove``, ``ExchangeMove``,
  ``PlayMove``, ``NoChallenge``, ``ChallengeMove``;
- server → client (:data:`ServerMessage`): ``NameRequest``, ``Start``,
  ``PassNotice``, ``ExchangeTiles``, ``ExchangeNotice``, ``PlayNotice``,
  ``NoChallengeTiles``, ``NoChallengeTimes``, ``ChallengeAccepted``,
  ``ChallengeAcceptedTimes``, ``ChallengeRejected``, ``ChallengeRejectedTiles``,
  ``Invalid``, ``End``.

Server messages of one type differ in length, so :func:`decode_server` tells them
apart by length alone. :func:`decode_client` checks the exact length too: a message
with missing or trailing bytes is malformed (the spec's formats are fixed), and the
:class:`~meeple.protocols.cmpn402.errors.RemoteProtocolError` it raises says what the
server should answer (INVALID for a malformed EXCHANGE or PLAY, nothing otherwise).

Times are milliseconds (int32, spec). Coordinates are as on the wire: ``column`` and
``row`` 1–15, ``direction`` 0 right, 1 down.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from meeple.protocols.cmpn402.errors import (
    Answer,
    CloseCode,
    LocalProtocolError,
    RemoteProtocolError,
)
from meeple.protocols.cmpn402.tiles import (
    BOARD_CELLS,
    BOARD_SIZE,
    TILE_FIELD_SIZE,
    board_from_format2,
    board_to_format2,
    rack_from_format1,
    rack_to_format1,
    tiles_from_format2,
    tiles_to_format2,
)

__all__ = [
    "MAX_NAME_BYTES",
    "ChallengeAccepted",
    "ChallengeAcceptedTimes",
    "ChallengeMove",
    "ChallengeRejected",
    "ChallengeRejectedTiles",
    "ClientMessage",
    "EndMessage",
    "EndReason",
    "ExchangeMove",
    "ExchangeNotice",
    "ExchangeTiles",
    "Invalid",
    "MessageType",
    "Name",
    "NameRequest",
    "NoChallenge",
    "NoChallengeTiles",
    "NoChallengeTimes",
    "PassMove",
    "PassNotice",
    "PlayMove",
    "PlayNotice",
    "ServerMessage",
    "Start",
    "decode_client",
    "decode_server",
]

# meeple's limit on a team name (the spec has none): 64 bytes of UTF-8 is plenty for a
# team and keeps logs readable. A longer NAME is refused (see errors.CloseCode).
MAX_NAME_BYTES = 64

_INT32 = struct.Struct(">i")
_TIMES = struct.Struct(">ii")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class MessageType(enum.IntEnum):
    """The type byte (spec, Table 1: Message Types)."""

    NAME = 0
    START = 1
    PASS = 2
    EXCHANGE = 3
    PLAY = 4
    NO_CHALLENGE = 5
    CHALLENGE = 6
    CHALLENGE_ACCEPTED = 7
    CHALLENGE_REJECTED = 8
    INVALID = 9
    END = 10


class EndReason(enum.IntEnum):
    """END's reason byte (spec, State: * ANY)."""

    ALL_TILES_USED = 0  # ERRATA: also the standard ends (out with an empty bag, 6 scoreless)
    TIME_ENDED = 1
    CONNECTION_ERROR = 2
    STOPPED = 3


def _int32(value: int, what: str) -> bytes:
    if not _INT32_MIN <= value <= _INT32_MAX:
        raise LocalProtocolError(f"{what} {value} does not fit an int32")
    return _INT32.pack(value)


def _times(player_time: int, total_time: int) -> bytes:
    return _int32(player_time, "player time") + _int32(total_time, "total time")


def _rack(tiles: str) -> bytes:
    try:
        return rack_to_format1(tiles)
    except ValueError as e:
        raise LocalProtocolError(str(e)) from e


def _coords(column: int, row: int, direction: int) -> bytes:
    if not (1 <= column <= BOARD_SIZE and 1 <= row <= BOARD_SIZE and direction in (0, 1)):
        raise LocalProtocolError(f"no square ({column}, {row}) or direction {direction}")
    return bytes((column, row, direction))


def _placed(tiles: str) -> bytes:
    try:
        return tiles_to_format2(tiles)
    except ValueError as e:
        raise LocalProtocolError(str(e)) from e


# --------------------------------------------------------------- client → server


@dataclass(frozen=True, slots=True)
class Name:
    """The client's NAME: type 0 then the raw UTF-8 team name, no length (ERRATA)."""

    name: str

    def encode(self) -> bytes:
        data = self.name.encode()
        if not data or len(data) > MAX_NAME_BYTES:
            raise LocalProtocolError(f"a name is 1–{MAX_NAME_BYTES} bytes of UTF-8")
        return bytes((MessageType.NAME,)) + data


@dataclass(frozen=True, slots=True)
class PassMove:
    """PASS from the player on turn (empty)."""

    def encode(self) -> bytes:
        return bytes((MessageType.PASS,))


@dataclass(frozen=True, slots=True)
class ExchangeMove:
    """EXCHANGE from the player on turn: the tiles to give back (Tile-Format-1, ``?`` blank)."""

    tiles: str

    def encode(self) -> bytes:
        return bytes((MessageType.EXCHANGE,)) + _rack(self.tiles)


@dataclass(frozen=True, slots=True)
class PlayMove:
    """PLAY from the player on turn: the new tiles from (column, row), and the score claimed.

    ``tiles`` are board tiles, a blank in lower case (Tile-Format-2); ERRATA: the first
    goes on (row, column), each next one on the next empty square in the direction.
    """

    column: int
    row: int
    direction: int
    tiles: str
    score: int

    def encode(self) -> bytes:
        return (
            bytes((MessageType.PLAY,))
            + _coords(self.column, self.row, self.direction)
            + _placed(self.tiles)
            + _int32(self.score, "score")
        )


@dataclass(frozen=True, slots=True)
class NoChallenge:
    """NO_CHALLENGE from the player who may challenge (empty)."""

    def encode(self) -> bytes:
        return bytes((MessageType.NO_CHALLENGE,))


@dataclass(frozen=True, slots=True)
class ChallengeMove:
    """CHALLENGE from the player who may challenge (empty)."""

    def encode(self) -> bytes:
        return bytes((MessageType.CHALLENGE,))


ClientMessage = Name | PassMove | ExchangeMove | PlayMove | NoChallenge | ChallengeMove


# --------------------------------------------------------------- server → client


@dataclass(frozen=True, slots=True)
class NameRequest:
    """The server's NAME: the single byte 0 (ERRATA), asking for the team name."""

    def encode(self) -> bytes:
        return bytes((MessageType.NAME,))


@dataclass(frozen=True, slots=True)
class Start:
    """START: order (1 moves first), 7 rack tiles, the board, scores and times.

    ``board`` is 15 rows of 15 characters, ``.`` empty, a blank in lower case. ERRATA:
    the scores are the current ones (non-zero when a game resumes from a checkpoint).
    """

    order: int
    tiles: str
    board: tuple[str, ...]
    score: int
    opponent_score: int
    player_time: int
    total_time: int

    def encode(self) -> bytes:
        if self.order not in (1, 2):
            raise LocalProtocolError(f"order {self.order} is not 1 or 2")
        try:
            board = board_to_format2(self.board)
        except ValueError as e:
            raise LocalProtocolError(str(e)) from e
        return (
            bytes((MessageType.START, self.order))
            + _rack(self.tiles)
            + board
            + _int32(self.score, "score")
            + _int32(self.opponent_score, "opponent score")
            + _times(self.player_time, self.total_time)
        )


@dataclass(frozen=True, slots=True)
class PassNotice:
    """PASS to the other player: the opponent passed; now your times (you are on turn)."""

    player_time: int
    total_time: int

    def encode(self) -> bytes:
        return bytes((MessageType.PASS,)) + _times(self.player_time, self.total_time)


@dataclass(frozen=True, slots=True)
class ExchangeTiles:
    """EXCHANGE to the player who exchanged: their new tiles."""

    tiles: str

    def encode(self) -> bytes:
        return bytes((MessageType.EXCHANGE,)) + _rack(self.tiles)


@dataclass(frozen=True, slots=True)
class ExchangeNotice:
    """EXCHANGE to the other player: how many tiles were exchanged, then your times."""

    count: int
    player_time: int
    total_time: int

    def encode(self) -> bytes:
        if not 0 <= self.count <= TILE_FIELD_SIZE:
            raise LocalProtocolError(f"count {self.count} is not 0–7")
        return bytes((MessageType.EXCHANGE, self.count)) + _times(self.player_time, self.total_time)


@dataclass(frozen=True, slots=True)
class PlayNotice:
    """PLAY echoed to the other player, with the challenge window and their times."""

    column: int
    row: int
    direction: int
    tiles: str
    score: int
    challenge_time: int
    player_time: int
    total_time: int

    def encode(self) -> bytes:
        return (
            PlayMove(self.column, self.row, self.direction, self.tiles, self.score).encode()
            + _int32(self.challenge_time, "challenge time")
            + _times(self.player_time, self.total_time)
        )


@dataclass(frozen=True, slots=True)
class NoChallengeTiles:
    """NO_CHALLENGE to the player whose play stands: their new tiles."""

    tiles: str

    def encode(self) -> bytes:
        return bytes((MessageType.NO_CHALLENGE,)) + _rack(self.tiles)


@dataclass(frozen=True, slots=True)
class NoChallengeTimes:
    """NO_CHALLENGE to the player whose challenge window ran out: their times."""

    player_time: int
    total_time: int

    def encode(self) -> bytes:
        return bytes((MessageType.NO_CHALLENGE,)) + _times(self.player_time, self.total_time)


@dataclass(frozen=True, slots=True)
class ChallengeAccepted:
    """CHALLENGE_ACCEPTED to the player whose play was withdrawn (empty)."""

    def encode(self) -> bytes:
        return bytes((MessageType.CHALLENGE_ACCEPTED,))


@dataclass(frozen=True, slots=True)
class ChallengeAcceptedTimes:
    """CHALLENGE_ACCEPTED to the challenger (right): their times; they are on turn."""

    player_time: int
    total_time: int

    def encode(self) -> bytes:
        return bytes((MessageType.CHALLENGE_ACCEPTED,)) + _times(self.player_time, self.total_time)


@dataclass(frozen=True, slots=True)
class ChallengeRejected:
    """CHALLENGE_REJECTED to the challenger (wrong): empty; they lose their turn."""

    def encode(self) -> bytes:
        return bytes((MessageType.CHALLENGE_REJECTED,))


@dataclass(frozen=True, slots=True)
class ChallengeRejectedTiles:
    """CHALLENGE_REJECTED to the player whose play stands: new tiles, times; they move again."""

    tiles: str
    player_time: int
    total_time: int

    def encode(self) -> bytes:
        return (
            bytes((MessageType.CHALLENGE_REJECTED,))
            + _rack(self.tiles)
            + _times(self.player_time, self.total_time)
        )


@dataclass(frozen=True, slots=True)
class Invalid:
    """INVALID to the player on turn: the EXCHANGE or PLAY was refused; their times."""

    player_time: int
    total_time: int

    def encode(self) -> bytes:
        return bytes((MessageType.INVALID,)) + _times(self.player_time, self.total_time)


@dataclass(frozen=True, slots=True)
class EndMessage:
    """END: the reason and the final scores, yours first."""

    reason: EndReason
    score: int
    opponent_score: int

    def encode(self) -> bytes:
        return (
            bytes((MessageType.END, self.reason))
            + _int32(self.score, "score")
            + _int32(self.opponent_score, "opponent score")
        )


ServerMessage = (
    NameRequest
    | Start
    | PassNotice
    | ExchangeTiles
    | ExchangeNotice
    | PlayNotice
    | NoChallengeTiles
    | NoChallengeTimes
    | ChallengeAccepted
    | ChallengeAcceptedTimes
    | ChallengeRejected
    | ChallengeRejectedTiles
    | Invalid
    | EndMessage
)


# --------------------------------------------------------------- decoding


def _type_of(data: bytes) -> MessageType:
    if not data:
        raise RemoteProtocolError("an empty message", Answer.IGNORE)
    try:
        return MessageType(data[0])
    except ValueError:
        raise RemoteProtocolError(f"unknown message type {data[0]}", Answer.IGNORE) from None


def _length(data: bytes, kind: MessageType, expected: int, answer: Answer) -> None:
    if len(data) != expected:
        raise RemoteProtocolError(
            f"{kind.name} is {expected} bytes, not {len(data)}", answer, message_type=kind
        )


def decode_client(data: bytes) -> ClientMessage:
    """One binary message from a client; RemoteProtocolError says what to answer if malformed.

    A malformed EXCHANGE or PLAY answers INVALID (spec: the only error reply); a bad
    NAME closes the connection (there is no reply for it, and a client with no name
    cannot play); anything else is ignored.
    """
    kind = _type_of(data)
    if kind is MessageType.NAME:
        raw = data[1:]
        if not raw or len(raw) > MAX_NAME_BYTES:
            raise RemoteProtocolError(
                f"a name is 1–{MAX_NAME_BYTES} bytes",
                Answer.CLOSE,
                CloseCode.POLICY_VIOLATION,
                kind,
            )
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RemoteProtocolError(
                "the name is not UTF-8", Answer.CLOSE, CloseCode.INVALID_PAYLOAD, kind
            ) from None
        if not name.isprintable() or name != name.strip():
            raise RemoteProtocolError(
                "the name has control characters or surrounding spaces",
                Answer.CLOSE,
                CloseCode.POLICY_VIOLATION,
                kind,
            )
        return Name(name)
    if kind is MessageType.PASS:
        _length(data, kind, 1, Answer.IGNORE)
        return PassMove()
    if kind is MessageType.EXCHANGE:
        _length(data, kind, 1 + TILE_FIELD_SIZE, Answer.INVALID)
        try:
            tiles = rack_from_format1(data[1:])
        except ValueError as e:
            raise RemoteProtocolError(str(e), Answer.INVALID, message_type=kind) from None
        if not tiles:
            raise RemoteProtocolError("an exchange of no tiles", Answer.INVALID, message_type=kind)
        return ExchangeMove(tiles)
    if kind is MessageType.PLAY:
        _length(data, kind, 4 + TILE_FIELD_SIZE + 4, Answer.INVALID)
        column, row, direction = data[1], data[2], data[3]
        if not (1 <= column <= BOARD_SIZE and 1 <= row <= BOARD_SIZE and direction in (0, 1)):
            raise RemoteProtocolError(
                f"no square ({column}, {row}) or direction {direction}",
                Answer.INVALID,
                message_type=kind,
            )
        try:
            tiles = tiles_from_format2(data[4 : 4 + TILE_FIELD_SIZE])
        except ValueError as e:
            raise RemoteProtocolError(str(e), Answer.INVALID, message_type=kind) from None
        if not tiles:
            raise RemoteProtocolError("a play of no tiles", Answer.INVALID, message_type=kind)
        (score,) = _INT32.unpack_from(data, 4 + TILE_FIELD_SIZE)
        return PlayMove(column, row, direction, tiles, score)
    if kind is MessageType.NO_CHALLENGE:
        _length(data, kind, 1, Answer.IGNORE)
        return NoChallenge()
    if kind is MessageType.CHALLENGE:
        _length(data, kind, 1, Answer.IGNORE)
        return ChallengeMove()
    raise RemoteProtocolError(
        f"{kind.name} is sent by the server only", Answer.IGNORE, message_type=kind
    )


def _fail(kind: MessageType, data: bytes) -> RemoteProtocolError:
    return RemoteProtocolError(
        f"no {kind.name} from the server is {len(data)} bytes", Answer.CLOSE, message_type=kind
    )


def decode_server(data: bytes) -> ServerMessage:
    """One binary message from the server; the layout is chosen by type and length."""
    kind = _type_of(data)
    n = len(data)
    try:
        if kind is MessageType.NAME and n == 1:
            return NameRequest()
        if kind is MessageType.START and n == 2 + TILE_FIELD_SIZE + BOARD_CELLS + 16:
            at = 2 + TILE_FIELD_SIZE
            score, opponent, player_time, total_time = struct.unpack_from(
                ">iiii", data, at + BOARD_CELLS
            )
            return Start(
                data[1],
                rack_from_format1(data[2:at]),
                board_from_format2(data[at : at + BOARD_CELLS]),
                score,
                opponent,
                player_time,
                total_time,
            )
        if kind is MessageType.PASS and n == 9:
            return PassNotice(*_TIMES.unpack_from(data, 1))
        if kind is MessageType.EXCHANGE and n == 8:
            return ExchangeTiles(rack_from_format1(data[1:]))
        if kind is MessageType.EXCHANGE and n == 10:
            return ExchangeNotice(data[1], *_TIMES.unpack_from(data, 2))
        if kind is MessageType.PLAY and n == 27:
            score, challenge, player_time, total_time = struct.unpack_from(">iiii", data, 11)
            tiles = tiles_from_format2(data[4:11])
            return PlayNotice(
                data[1], data[2], data[3], tiles, score, challenge, player_time, total_time
            )
        if kind is MessageType.NO_CHALLENGE and n == 8:
            return NoChallengeTiles(rack_from_format1(data[1:]))
        if kind is MessageType.NO_CHALLENGE and n == 9:
            return NoChallengeTimes(*_TIMES.unpack_from(data, 1))
        if kind is MessageType.CHALLENGE_ACCEPTED and n == 1:
            return ChallengeAccepted()
        if kind is MessageType.CHALLENGE_ACCEPTED and n == 9:
            return ChallengeAcceptedTimes(*_TIMES.unpack_from(data, 1))
        if kind is MessageType.CHALLENGE_REJECTED and n == 1:
            return ChallengeRejected()
        if kind is MessageType.CHALLENGE_REJECTED and n == 16:
            return ChallengeRejectedTiles(
                rack_from_format1(data[1:8]), *_TIMES.unpack_from(data, 8)
            )
        if kind is MessageType.INVALID and n == 9:
            return Invalid(*_TIMES.unpack_from(data, 1))
        if kind is MessageType.END and n == 10:
            return EndMessage(EndReason(data[1]), *_TIMES.unpack_from(data, 2))
    except ValueError as e:
        raise RemoteProtocolError(str(e), Answer.CLOSE, message_type=kind) from None
    raise _fail(kind, data)
