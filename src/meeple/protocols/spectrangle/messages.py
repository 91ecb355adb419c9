"""Every Spectrangle 1.4 command as a typed message, with ``encode`` and ``decode``.

Client → server (:data:`ClientMessage`): :class:`Connect`, :class:`Request`,
:class:`Place`, :class:`Skip`, :class:`Exchange`, :class:`Chat`.
Server → client (:data:`ServerMessage`): :class:`Welcome`, :class:`Waiting`,
:class:`StartWith`, :class:`Order`, :class:`Tiles`, :class:`SkipNotice` (the 1.3
stand-alone ``skip <name>``, read only), :class:`PlayerSkipped`, :class:`Replace`,
:class:`Move`, :class:`GameFinished`, :class:`PlayerLeft`, :class:`ChatFrom`,
:class:`ErrorReply`.

Each message has :meth:`to_line` (text without the line end) and :meth:`encode`
(bytes with ``\\n``); :func:`decode_client` and :func:`decode_server` read one line
(from :class:`~meeple.protocols.spectrangle.framing.LineFramer`) and raise
:class:`~meeple.protocols.spectrangle.errors.RemoteProtocolError` carrying the error
word the sender deserves. Constructors check their arguments and raise ValueError, so
an unencodable message cannot be built.

Reading is liberal, writing strict (ERRATA preamble): command words in any case, runs
of spaces, a trailing space (the transcript's leaderboard has one), ``tiles:`` with a
colon (the spec's table), ``place <tile> <index>`` without ``on``, tiles in any case
and tiles lines with fewer than 4 slots. Meeple writes the canonical forms only.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from meeple.games.spectrangle.errors import NotationError
from meeple.games.spectrangle.tiles import Tile
from meeple.protocols.spectrangle.errors import ErrorWord, RemoteProtocolError
from meeple.protocols.spectrangle.framing import encode_line

__all__ = [
    "CHAT_EXTENSION",
    "HAND_SLOTS",
    "NAME_MAX_LENGTH",
    "RESERVED_NAMES",
    "Chat",
    "ChatFrom",
    "ClientCommand",
    "ClientMessage",
    "Connect",
    "ErrorReply",
    "Exchange",
    "GameFinished",
    "Hand",
    "Message",
    "Move",
    "Order",
    "Place",
    "PlayerLeft",
    "PlayerSkipped",
    "Replace",
    "Request",
    "ServerMessage",
    "Skip",
    "SkipNotice",
    "StartWith",
    "Tiles",
    "Waiting",
    "Welcome",
    "client_command",
    "decode_client",
    "decode_server",
    "is_valid_name",
]

CHAT_EXTENSION = "chat"  # the one extension the spec defines ("connect")
HAND_SLOTS = 4  # ERRATA: a tiles line always has 4 slots per player, "null" for empty
NAME_MAX_LENGTH = 32
# Words that stand where a name stands in some line; a player so named would make
# naive parsers of other implementations misread it (meeple's decision).
RESERVED_NAMES = frozenset({"null", "turn", "skip", "skipped", "with", "on", "left"})
_NULL = "null"


def is_valid_name(name: str) -> bool:
    """The spec's name check, made precise: 1–32 printable characters, no whitespace,
    not a reserved word and not tile notation (``RGB4``). Uniqueness is the server's."""
    return (
        0 < len(name) <= NAME_MAX_LENGTH
        and name.isprintable()
        and not any(c.isspace() for c in name)
        and name.casefold() not in RESERVED_NAMES
        and not Tile.is_notation(name)
    )


def _check_name(name: str) -> None:
    if not is_valid_name(name):
        raise ValueError(f"not a valid name: {name!r}")


def _check_text(text: str) -> None:
    if not text.strip() or "\n" in text or "\r" in text:
        raise ValueError("chat text must be one non-blank line")


class Message:
    """Base of every message: a line of text on the wire."""

    __slots__ = ()

    def to_line(self) -> str:
        """The line without its line end."""
        raise NotImplementedError

    def encode(self) -> bytes:
        """The line as bytes, ``\\n`` included."""
        return encode_line(self.to_line())


# ------------------------------------------------------------------ client → server


@dataclass(frozen=True, slots=True)
class Connect(Message):
    """``connect <name> [extensions]``: register with the server (phase 1)."""

    name: str
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_name(self.name)
        for ext in self.extensions:
            if not ext or any(c.isspace() for c in ext):
                raise ValueError(f"not an extension: {ext!r}")

    def to_line(self) -> str:
        return " ".join(("connect", self.name, *self.extensions))


@dataclass(frozen=True, slots=True)
class Request(Message):
    """``request <players>``: ask for a game of 2–4 players (phase 2)."""

    players: int

    def __post_init__(self) -> None:
        if not 2 <= self.players <= 4:
            raise ValueError("a game has 2–4 players")

    def to_line(self) -> str:
        return f"request {self.players}"


@dataclass(frozen=True, slots=True)
class Place(Message):
    """``place <tile> on <index>``: put a tile, as rotated, on a field (phase 5)."""

    tile: Tile
    index: int

    def __post_init__(self) -> None:
        if self.index < 0:
            raise ValueError("a field index is not negative")

    def to_line(self) -> str:
        return f"place {self.tile} on {self.index}"


@dataclass(frozen=True, slots=True)
class Skip(Message):
    """``skip``: pass the turn without exchanging (phase 6)."""

    def to_line(self) -> str:
        return "skip"


@dataclass(frozen=True, slots=True)
class Exchange(Message):
    """``exchange <tile>``: swap one tile and pass the turn (phase 6)."""

    tile: Tile

    def to_line(self) -> str:
        return f"exchange {self.tile}"


@dataclass(frozen=True, slots=True)
class Chat(Message):
    """``chat <message>`` from a client (chat extension, phase 1b)."""

    text: str

    def __post_init__(self) -> None:
        _check_text(self.text)

    def to_line(self) -> str:
        return f"chat {self.text}"


ClientMessage = Connect | Request | Place | Skip | Exchange | Chat


# ------------------------------------------------------------------ server → client


def _names_line(word: str, names: tuple[str, ...]) -> str:
    return " ".join((word, *names))


def _check_names(names: tuple[str, ...]) -> None:
    for name in names:
        _check_name(name)


@dataclass(frozen=True, slots=True)
class Welcome(Message):
    """``welcome [extensions]``: the name is accepted; the extensions in use."""

    extensions: tuple[str, ...] = ()

    def to_line(self) -> str:
        return _names_line("welcome", self.extensions)


@dataclass(frozen=True, slots=True)
class Waiting(Message):
    """``waiting [names]``: who is in the queue for the same number of players."""

    names: tuple[str, ...]

    def __post_init__(self) -> None:
        _check_names(self.names)

    def to_line(self) -> str:
        return _names_line("waiting", self.names)


@dataclass(frozen=True, slots=True)
class StartWith(Message):
    """``start with [names]``: the game starts with these players (phase 3)."""

    names: tuple[str, ...]

    def __post_init__(self) -> None:
        _check_names(self.names)

    def to_line(self) -> str:
        return _names_line("start with", self.names)


@dataclass(frozen=True, slots=True)
class Order(Message):
    """``order [names]``: the order of turns (phase 3)."""

    names: tuple[str, ...]

    def __post_init__(self) -> None:
        _check_names(self.names)

    def to_line(self) -> str:
        return _names_line("order", self.names)


@dataclass(frozen=True, slots=True)
class Hand:
    """One player's part of a tiles line: the name and exactly 4 slots (None = ``null``)."""

    name: str
    tiles: tuple[Tile | None, ...]

    def __post_init__(self) -> None:
        _check_name(self.name)
        if len(self.tiles) != HAND_SLOTS:
            raise ValueError(f"a hand has {HAND_SLOTS} slots")

    @classmethod
    def of(cls, name: str, tiles: Sequence[Tile]) -> Hand:
        """A hand from the tiles held (0–4), padded with empty slots."""
        if len(tiles) > HAND_SLOTS:
            raise ValueError(f"a hand has at most {HAND_SLOTS} tiles")
        return cls(name, tuple(tiles) + (None,) * (HAND_SLOTS - len(tiles)))

    @property
    def held(self) -> tuple[Tile, ...]:
        """The tiles, without the empty slots."""
        return tuple(t for t in self.tiles if t is not None)


@dataclass(frozen=True, slots=True)
class Tiles(Message):
    """``tiles <name> t1 t2 t3 t4 ... turn <name>`` (ERRATA; ``skip <name>`` in place of
    ``turn <name>`` when that player has no legal placement, 1.4 change)."""

    hands: tuple[Hand, ...]
    player: str
    must_skip: bool = False

    def __post_init__(self) -> None:
        _check_name(self.player)

    def to_line(self) -> str:
        parts = ["tiles"]
        for hand in self.hands:
            parts.append(hand.name)
            parts.extend(_NULL if t is None else str(t) for t in hand.tiles)
        parts += ["skip" if self.must_skip else "turn", self.player]
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class SkipNotice(Message):
    """``skip <name>`` on a line of its own: the 1.3 form of "must skip". Meeple never
    sends it (1.4 folds it into the tiles line) but reads it from older servers."""

    name: str

    def __post_init__(self) -> None:
        _check_name(self.name)

    def to_line(self) -> str:
        return f"skip {self.name}"


@dataclass(frozen=True, slots=True)
class PlayerSkipped(Message):
    """``player skipped <name>``: a player chose to skip without exchanging."""

    name: str

    def __post_init__(self) -> None:
        _check_name(self.name)

    def to_line(self) -> str:
        return f"player skipped {self.name}"


@dataclass(frozen=True, slots=True)
class Replace(Message):
    """``replace <name> <tile> with <new tile>``: a player exchanged a tile."""

    name: str
    tile: Tile
    new_tile: Tile

    def __post_init__(self) -> None:
        _check_name(self.name)

    def to_line(self) -> str:
        return f"replace {self.name} {self.tile} with {self.new_tile}"


@dataclass(frozen=True, slots=True)
class Move(Message):
    """``move <name> <tile> <index> <points>``: a placement and its score (phase 7)."""

    name: str
    tile: Tile
    index: int
    points: int

    def __post_init__(self) -> None:
        _check_name(self.name)
        if self.index < 0 or self.points < 0:
            raise ValueError("index and points are not negative")

    def to_line(self) -> str:
        return f"move {self.name} {self.tile} {self.index} {self.points}"


@dataclass(frozen=True, slots=True)
class GameFinished(Message):
    """``game finished leaderboard [<name> <points>]``, ordered by points (phase 8)."""

    leaderboard: tuple[tuple[str, int], ...]

    def __post_init__(self) -> None:
        _check_names(tuple(name for name, _ in self.leaderboard))

    def to_line(self) -> str:
        parts = ["game finished leaderboard"]
        for name, points in self.leaderboard:
            parts += [name, str(points)]
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class PlayerLeft(Message):
    """``player <name> left``: a player disconnected; the game is over (phase 9)."""

    name: str

    def __post_init__(self) -> None:
        _check_name(self.name)

    def to_line(self) -> str:
        return f"player {self.name} left"


@dataclass(frozen=True, slots=True)
class ChatFrom(Message):
    """``chat <name> <message>``: the server relays a player's chat line."""

    name: str
    text: str

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_text(self.text)

    def to_line(self) -> str:
        return f"chat {self.name} {self.text}"


@dataclass(frozen=True, slots=True)
class ErrorReply(Message):
    """``invalidMove``, ``invalidCommand`` or ``invalidName``."""

    word: ErrorWord

    def to_line(self) -> str:
        return self.word.value


ServerMessage = (
    Welcome
    | Waiting
    | StartWith
    | Order
    | Tiles
    | SkipNotice
    | PlayerSkipped
    | Replace
    | Move
    | GameFinished
    | PlayerLeft
    | ChatFrom
    | ErrorReply
)


# ------------------------------------------------------------------------ decoding


class ClientCommand(enum.Enum):
    """The command word of a client line, known before its arguments are read."""

    CONNECT = "connect"
    REQUEST = "request"
    PLACE = "place"
    SKIP = "skip"
    EXCHANGE = "exchange"
    CHAT = "chat"


_CHAT_RE = re.compile(r"\s*chat\s(.*)", re.IGNORECASE | re.DOTALL)
_INT_RE = re.compile(r"-?[0-9]{1,9}")


def client_command(text: str) -> ClientCommand | None:
    """The command a client line starts with, or None for an unknown word."""
    words = text.split(maxsplit=1)
    if not words:
        return None
    try:
        return ClientCommand(words[0].casefold())
    except ValueError:
        return None


def _fail(reason: str, word: ErrorWord = ErrorWord.INVALID_COMMAND) -> RemoteProtocolError:
    return RemoteProtocolError(reason, word)


def _tile(text: str, word: ErrorWord) -> Tile:
    try:
        return Tile.parse(text)
    except NotationError:
        raise _fail(f"not a tile: {text!r}", word) from None


def _int(text: str, word: ErrorWord) -> int:
    if not _INT_RE.fullmatch(text):
        raise _fail(f"not a number: {text!r}", word)
    return int(text)


def _name(text: str, word: ErrorWord = ErrorWord.INVALID_COMMAND) -> str:
    if not is_valid_name(text):
        raise _fail(f"not a valid name: {text!r}", word)
    return text


def decode_client(text: str) -> ClientMessage:
    """One line from a client to its message; raise RemoteProtocolError with the reply.

    ``invalidName`` for a connect without a valid name; ``invalidMove`` for a place or
    exchange whose tile or index cannot be read (the command is right, the move is
    not); ``invalidCommand`` for everything else.
    """
    command = client_command(text)
    words = text.split()
    args = words[1:]
    move = ErrorWord.INVALID_MOVE
    if command is ClientCommand.CONNECT:
        if not args:
            raise _fail("connect without a name", ErrorWord.INVALID_NAME)
        return Connect(
            _name(args[0], ErrorWord.INVALID_NAME), tuple(a.casefold() for a in args[1:])
        )
    if command is ClientCommand.REQUEST:
        if len(args) != 1 or not _INT_RE.fullmatch(args[0]) or not 2 <= int(args[0]) <= 4:
            raise _fail("request takes one number of players, 2–4")
        return Request(int(args[0]))
    if command is ClientCommand.PLACE:
        if len(args) == 3 and args[1].casefold() == "on":
            args = [args[0], args[2]]
        if len(args) != 2 or args[1].casefold() == "on":
            raise _fail("place <tile> on <index>")
        index = _int(args[1], move)
        if index < 0:
            raise _fail("a field index is not negative", move)
        return Place(_tile(args[0], move), index)
    if command is ClientCommand.SKIP:
        if args:
            raise _fail("skip takes no argument")
        return Skip()
    if command is ClientCommand.EXCHANGE:
        if len(args) != 1:
            raise _fail("exchange <tile>")
        return Exchange(_tile(args[0], move))
    if command is ClientCommand.CHAT:
        match = _CHAT_RE.fullmatch(text)
        if match is None or not match.group(1).strip():
            raise _fail("chat without a message")
        if "\r" in match.group(1):  # a lone CR inside the line (found by make fuzz)
            raise _fail("chat text must be one line")
        return Chat(match.group(1).strip())
    raise _fail(f"unknown command: {text[:40]!r}")


def _names(words: list[str]) -> tuple[str, ...]:
    return tuple(_name(w) for w in words)


def _decode_tiles(args: list[str]) -> Tiles:
    if len(args) < 2 or args[-2].casefold() not in ("turn", "skip"):
        raise _fail("a tiles line ends with turn <name> or skip <name>")
    must_skip = args[-2].casefold() == "skip"
    player = _name(args[-1])
    hands: list[Hand] = []
    body = args[:-2]
    i = 0
    while i < len(body):
        name = _name(body[i])
        i += 1
        slots: list[Tile | None] = []
        while i < len(body) and len(slots) < HAND_SLOTS:
            word = body[i]
            if word.casefold() == _NULL:
                slots.append(None)
            elif Tile.is_notation(word):
                slots.append(Tile.parse(word))
            else:
                break
            i += 1
        hands.append(Hand(name, tuple(slots) + (None,) * (HAND_SLOTS - len(slots))))
    return Tiles(tuple(hands), player, must_skip)


def decode_server(text: str) -> ServerMessage:
    """One line from a server to its message; raise RemoteProtocolError when unreadable."""
    words = text.split()
    if not words:
        raise _fail("blank line")
    head = words[0].casefold()
    args = words[1:]
    if len(words) == 1:
        try:
            return ErrorReply(ErrorWord.from_wire(words[0]))
        except ValueError:
            pass
    if head == "welcome":
        return Welcome(tuple(a.casefold() for a in args))
    if head == "waiting":
        return Waiting(_names(args))
    if head == "start" and args and args[0].casefold() == "with":
        return StartWith(_names(args[1:]))
    if head == "order":
        return Order(_names(args))
    if head in ("tiles", "tiles:"):
        return _decode_tiles(args)
    if head == "skip" and len(args) == 1:
        return SkipNotice(_name(args[0]))
    if head == "player" and len(args) == 2 and args[0].casefold() == "skipped":
        return PlayerSkipped(_name(args[1]))
    if head == "player" and len(args) == 2 and args[1].casefold() == "left":
        return PlayerLeft(_name(args[0]))
    if head == "replace" and len(args) == 4 and args[2].casefold() == "with":
        bad = ErrorWord.INVALID_COMMAND
        return Replace(_name(args[0]), _tile(args[1], bad), _tile(args[3], bad))
    if head == "move" and len(args) == 4:
        bad = ErrorWord.INVALID_COMMAND
        index, points = _int(args[2], bad), _int(args[3], bad)
        if index < 0 or points < 0:
            raise _fail("negative index or points")
        return Move(_name(args[0]), _tile(args[1], bad), index, points)
    if head == "game" and [a.casefold() for a in args[:2]] == ["finished", "leaderboard"]:
        rest = args[2:]
        if len(rest) % 2:
            raise _fail("a leaderboard is pairs of <name> <points>")
        board = tuple(
            (_name(rest[i]), _int(rest[i + 1], ErrorWord.INVALID_COMMAND))
            for i in range(0, len(rest), 2)
        )
        return GameFinished(board)
    if head == "chat" and len(args) >= 2:
        _, name, message = text.strip().split(maxsplit=2)
        if "\r" in message:  # a lone CR inside the line (found by make fuzz)
            raise _fail("chat text must be one line")
        return ChatFrom(_name(name), message.strip())
    raise _fail(f"unknown server line: {text[:40]!r}")
