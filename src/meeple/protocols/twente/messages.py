"""Every command of the Twente protocol (spec "Commands") as a frozen dataclass.

A message knows its wire form: :meth:`Message.encode` gives the bytes to send (strict:
it raises :class:`LocalProtocolError` for a value the spec does not allow), and
:func:`decode` turns the fields of a received :class:`~.framing.Frame` into a message
(liberal, but it raises :class:`RemoteProtocolError` carrying the E0xx code the sender
should get for anything it cannot accept). :func:`parse` reads one whole message from
bytes, for tests and tools.

Reading rules (the decisions are listed in ``docs/protocols/twente.md``):

- command names, ``WORD``/``SWAP``/``PASS``, ``H``/``V``, ``WIN``/``DISCONNECT``, flags,
  coordinates and error codes are read in any case; letters in words are not (a lower
  case letter is a blank, spec "Tiles");
- an unknown command is E002, a wrong number of arguments or a bad closed argument E003,
  a bad square E004 (spec "Errors");
- an optional last argument that is present but empty counts as absent.

Coordinates are kept 0-based as ``(x, y)`` (``x`` the column), as in the engine; the
square text (``H8``) is :attr:`MakeWord.square`.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from meeple.games.scrabble.board import BOARD_SIZE, Direction, format_square, parse_square
from meeple.games.scrabble.errors import NotationError
from meeple.protocols.twente.errors import (
    ErrorCode,
    LocalProtocolError,
    RemoteProtocolError,
)
from meeple.protocols.twente.framing import Frame, Framer, encode_frame

__all__ = [
    "BLANK_ON_RACK",
    "CLIENT_COMMANDS",
    "DEFAULT_PLAYERS",
    "EXTENSIONS",
    "MAX_CHAT_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "RACK_SIZE",
    "SERVER_COMMANDS",
    "Announce",
    "ClientMessage",
    "Command",
    "Error",
    "Flag",
    "GameOver",
    "GameOverReason",
    "InformQueue",
    "InformSwap",
    "InformWord",
    "MakeSwap",
    "MakeWord",
    "Message",
    "NewTiles",
    "NotifyChat",
    "NotifyTurn",
    "PlayerDisconnected",
    "RequestGame",
    "SendChat",
    "ServerMessage",
    "StartGame",
    "Welcome",
    "decode",
    "decode_args",
    "parse",
]

MIN_PLAYERS = 2
MAX_PLAYERS = 4
DEFAULT_PLAYERS = 2  # spec REQUESTGAME: "set to the default value of 2"
RACK_SIZE = 7
BLANK_ON_RACK = "!"  # spec "Tiles": a blank is "!" until it is placed
MAX_NAME_LENGTH = 32  # the spec sets none; names are shown in every other client's UI
MAX_CHAT_LENGTH = 1000  # characters; keeps NOTIFYCHAT under any peer's 4 KiB frame limit
_MAX_NUMBER_DIGITS = 6  # every number on the wire is a count or a score
_MAX_SQUARE_LENGTH = 4  # "O15" and a little slack for a stray space


class Command(enum.Enum):
    """A command name as the spec lists it under "Commands"."""

    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, run several times per message sent).
    __hash__ = object.__hash__

    ANNOUNCE = "ANNOUNCE"
    WELCOME = "WELCOME"
    REQUESTGAME = "REQUESTGAME"
    INFORMQUEUE = "INFORMQUEUE"
    STARTGAME = "STARTGAME"
    NOTIFYTURN = "NOTIFYTURN"
    MAKEMOVE = "MAKEMOVE"
    NEWTILES = "NEWTILES"
    INFORMMOVE = "INFORMMOVE"
    ERROR = "ERROR"
    GAMEOVER = "GAMEOVER"
    PLAYERDISCONNECTED = "PLAYERDISCONNECTED"
    SENDCHAT = "SENDCHAT"
    NOTIFYCHAT = "NOTIFYCHAT"

    @classmethod
    def from_wire(cls, text: str) -> Command:
        """The command a first field names, in any case; E002 if it names none."""
        try:
            return cls(text.strip().upper())
        except ValueError:
            raise RemoteProtocolError(
                ErrorCode.UNKNOWN_COMMAND, f"unknown command {text[:40]!r}"
            ) from None


class Flag(enum.Enum):
    """A feature flag of ANNOUNCE (client) and WELCOME (server)."""

    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, run several times per message sent).
    __hash__ = object.__hash__

    CHAT = "CHAT"  # SENDCHAT / NOTIFYCHAT
    TEAMPLAY = "TEAMPLAY"  # server only; ERRATA: the server accepts 3- and 4-player games


class GameOverReason(enum.Enum):
    """The "type of win" of GAMEOVER."""

    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, run several times per message sent).
    __hash__ = object.__hash__

    WIN = "WIN"
    DISCONNECT = "DISCONNECT"


# Who may send what (spec "Commands"; ERROR goes both ways, spec "Errors").
CLIENT_COMMANDS = frozenset(
    {Command.ANNOUNCE, Command.REQUESTGAME, Command.MAKEMOVE, Command.SENDCHAT, Command.ERROR}
)
SERVER_COMMANDS = frozenset(Command) - CLIENT_COMMANDS | {Command.ERROR}
# Commands that belong to an extension; the peer must have announced its flag (ERRATA).
EXTENSIONS = {Command.SENDCHAT: Flag.CHAT, Command.NOTIFYCHAT: Flag.CHAT}

_DIRECTIONS = {"H": Direction.ACROSS, "V": Direction.DOWN}
_DIRECTION_LETTERS = {d: letter for letter, d in _DIRECTIONS.items()}


class _Invalid(Exception):
    """A bad value; becomes a Remote- or LocalProtocolError depending on who made it."""

    def __init__(self, code: ErrorCode, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(reason)


class Message:
    """Base of every message. ``command`` is the first field on the wire."""

    __slots__ = ()
    command: ClassVar[Command]

    def fields(self) -> tuple[str, ...]:
        """The arguments as they go on the wire, after the command."""
        raise NotImplementedError

    def check(self) -> None:
        """Raise LocalProtocolError if the spec does not allow these values."""
        try:
            self._check()
        except _Invalid as exc:
            raise LocalProtocolError(exc.code, exc.reason) from None

    def encode(self) -> bytes:
        """The message as bytes, ready to write; checked first (strict in what we send).

        Equal messages encode to equal bytes, so the last few thousand are remembered: a
        server sends the same INFORMWORD to every player of a game, and checks and
        encodes it once."""
        data = _ENCODED.get(self)
        if data is None:
            self.check()
            data = encode_frame((self.command.value, *self.fields()))
            if len(_ENCODED) >= _ENCODED_MAX:
                _ENCODED.clear()
            _ENCODED[self] = data
        return data

    def _check(self) -> None:
        """Raise _Invalid for a value the spec does not allow."""

    def _check_received(self) -> None:
        """Like _check, for a received message: where we read liberally, less strict."""
        self._check()


_ENCODED: dict[Message, bytes] = {}  # see Message.encode
_ENCODED_MAX = 4096


# --- value checks, shared by decoding (peer's values) and encoding (ours) -------------


def _check_name(name: str) -> None:
    if name in _GOOD_NAMES:  # names recur in every message of a game: checked once
        return
    if not name or len(name) > MAX_NAME_LENGTH:
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"a name has 1 to {MAX_NAME_LENGTH} characters")
    if name != name.strip() or any(unicodedata.category(c)[0] == "C" for c in name):
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"not a usable name: {name!r}")
    if len(_GOOD_NAMES) >= _ENCODED_MAX:
        _GOOD_NAMES.clear()
    _GOOD_NAMES.add(name)


_GOOD_NAMES: set[str] = set()


def _check_names(names: Sequence[str]) -> None:
    for name in names:
        _check_name(name)
    if len(set(names)) != len(names):
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, "a name appears twice")


def _check_players(players: int) -> None:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise _Invalid(
            ErrorCode.INVALID_ARGUMENT, f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}"
        )


def _check_rack_tiles(tiles: str, what: str) -> None:
    # spec "Tiles": tiles are capitals, a blank is "!"; a rack holds 7 tiles.
    if any(not ("A" <= c <= "Z" or c == BLANK_ON_RACK) for c in tiles):
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"{what} are A-Z and !: {tiles[:20]!r}")
    if len(tiles) > RACK_SIZE:
        # More tiles than a rack holds: the player cannot have them (spec E008).
        raise _Invalid(ErrorCode.TILES_NOT_ON_RACK, f"{what}: more than {RACK_SIZE} tiles")


def _check_word(word: str) -> None:
    # spec "Tiles": capitals, a blank as the lower case letter it stands for.
    if not word or not all("A" <= c <= "Z" or "a" <= c <= "z" for c in word):
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"a word is letters A-Z/a-z: {word[:20]!r}")
    if len(word) > BOARD_SIZE:
        raise _Invalid(ErrorCode.WORD_DOES_NOT_FIT, "word longer than the board")


def _check_square(x: int, y: int) -> None:
    if not (0 <= x < BOARD_SIZE and 0 <= y < BOARD_SIZE):
        raise _Invalid(ErrorCode.INVALID_COORDINATE, f"square off the board: ({x}, {y})")


def _check_chat(text: str) -> None:
    if not text or len(text) > MAX_CHAT_LENGTH:
        raise _Invalid(
            ErrorCode.INVALID_ARGUMENT, f"a chat message has 1 to {MAX_CHAT_LENGTH} characters"
        )


# --- field readers --------------------------------------------------------------------


def _arity(args: Sequence[str], least: int, most: int, what: str) -> None:
    if not least <= len(args) <= most:
        expected = str(least) if least == most else f"{least} to {most}"
        raise _Invalid(
            ErrorCode.INVALID_ARGUMENT, f"{what} takes {expected} arguments, got {len(args)}"
        )


def _int(text: str, what: str, *, signed: bool = False) -> int:
    t = text.strip()
    digits = t[1:] if signed and t.startswith("-") else t
    if not digits or len(digits) > _MAX_NUMBER_DIGITS or not digits.isascii():
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"{what} is not a number: {text[:20]!r}")
    if not digits.isdigit():
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"{what} is not a number: {text[:20]!r}")
    return int(t)


def _square(text: str) -> tuple[int, int]:
    if len(text) > _MAX_SQUARE_LENGTH:
        raise _Invalid(ErrorCode.INVALID_COORDINATE, f"not a square: {text[:20]!r}")
    try:
        return parse_square(text)
    except NotationError as exc:
        raise _Invalid(ErrorCode.INVALID_COORDINATE, str(exc)) from None


def _direction(text: str) -> Direction:
    try:
        return _DIRECTIONS[text.strip().upper()]
    except KeyError:
        # spec E003: a closed argument that is none of its options (the "D" example).
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"direction is H or V: {text[:20]!r}") from None


def _flags(args: Sequence[str]) -> frozenset[Flag]:
    # Unknown flags are skipped: the spec says more features may come, and a client
    # announcing one we do not know simply does not get it.
    known = {f.value for f in Flag}
    return frozenset(Flag(a.strip().upper()) for a in args if a.strip().upper() in known)


def _encode_flags(flags: frozenset[Flag]) -> tuple[str, ...]:
    return tuple(f.value for f in Flag if f in flags)  # a fixed order: the Enum's


def _optional(args: Sequence[str]) -> str | None:
    """The single optional argument, None if absent or empty."""
    return args[0] if args and args[0] != "" else None


# --- client to server -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Announce(Message):
    """ANNOUNCE: the client's name and the extension flags it supports (CHAT)."""

    command = Command.ANNOUNCE
    name: str
    flags: frozenset[Flag] = frozenset()

    def fields(self) -> tuple[str, ...]:
        return (self.name, *_encode_flags(self.flags))

    def _check(self) -> None:
        _check_name(self.name)


@dataclass(frozen=True, slots=True)
class RequestGame(Message):
    """REQUESTGAME: join the queue for a game of ``players`` (None: not given, so 2)."""

    command = Command.REQUESTGAME
    players: int | None = None

    @property
    def player_count(self) -> int:
        return DEFAULT_PLAYERS if self.players is None else self.players

    def fields(self) -> tuple[str, ...]:
        return () if self.players is None else (str(self.players),)

    def _check(self) -> None:
        if self.players is not None:
            _check_players(self.players)


@dataclass(frozen=True, slots=True)
class MakeWord(Message):
    """MAKEMOVE WORD: the whole main word from a start square (ERRATA), blanks lower case."""

    command = Command.MAKEMOVE
    x: int
    y: int
    direction: Direction
    word: str

    @property
    def square(self) -> str:
        return format_square(self.x, self.y)

    def fields(self) -> tuple[str, ...]:
        return ("WORD", self.square, _DIRECTION_LETTERS[self.direction], self.word)

    def _check(self) -> None:
        _check_square(self.x, self.y)
        _check_word(self.word)


@dataclass(frozen=True, slots=True)
class MakeSwap(Message):
    """MAKEMOVE SWAP: tiles to exchange, ``!`` for a blank; no tiles is a pass (ERRATA)."""

    command = Command.MAKEMOVE
    tiles: str

    @property
    def is_pass(self) -> bool:
        return not self.tiles

    def fields(self) -> tuple[str, ...]:
        return ("SWAP", self.tiles)

    def _check(self) -> None:
        _check_rack_tiles(self.tiles, "swapped tiles")


@dataclass(frozen=True, slots=True)
class SendChat(Message):
    """SENDCHAT (extension CHAT): a chat line from the client."""

    command = Command.SENDCHAT
    text: str

    def fields(self) -> tuple[str, ...]:
        return (self.text,)

    def _check(self) -> None:
        _check_chat(self.text)


# --- server to client -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome(Message):
    """WELCOME: the server confirms the client's name and lists its flags."""

    command = Command.WELCOME
    name: str
    flags: frozenset[Flag] = frozenset()

    def fields(self) -> tuple[str, ...]:
        return (self.name, *_encode_flags(self.flags))

    def _check(self) -> None:
        _check_name(self.name)


@dataclass(frozen=True, slots=True)
class InformQueue(Message):
    """INFORMQUEUE: ``waiting`` players are in the queue for a game of ``required``."""

    command = Command.INFORMQUEUE
    waiting: int
    required: int

    def fields(self) -> tuple[str, ...]:
        return (str(self.waiting), str(self.required))

    def _check(self) -> None:
        _check_players(self.required)
        if not 0 <= self.waiting <= self.required:
            raise _Invalid(ErrorCode.INVALID_ARGUMENT, "more players waiting than required")


@dataclass(frozen=True, slots=True)
class StartGame(Message):
    """STARTGAME: the players in playing order (the first need not start)."""

    command = Command.STARTGAME
    players: tuple[str, ...]

    def fields(self) -> tuple[str, ...]:
        return self.players

    def _check(self) -> None:
        _check_players(len(self.players))
        _check_names(self.players)


@dataclass(frozen=True, slots=True)
class NewTiles(Message):
    """NEWTILES: tiles the client just drew, ``!`` for a blank (may be empty: bag empty)."""

    command = Command.NEWTILES
    tiles: str

    def fields(self) -> tuple[str, ...]:
        return (self.tiles,)

    def _check(self) -> None:
        _check_rack_tiles(self.tiles, "new tiles")


@dataclass(frozen=True, slots=True)
class NotifyTurn(Message):
    """NOTIFYTURN: whose turn it is, and whether it is the receiver's."""

    command = Command.NOTIFYTURN
    your_turn: bool
    player: str

    def fields(self) -> tuple[str, ...]:
        return ("1" if self.your_turn else "0", self.player)

    def _check(self) -> None:
        _check_name(self.player)


@dataclass(frozen=True, slots=True)
class InformWord(Message):
    """INFORMMOVE WORD: ``player`` laid ``word`` from a square in a direction."""

    command = Command.INFORMMOVE
    player: str
    x: int
    y: int
    direction: Direction
    word: str

    @property
    def square(self) -> str:
        return format_square(self.x, self.y)

    def fields(self) -> tuple[str, ...]:
        letter = _DIRECTION_LETTERS[self.direction]
        return (self.player, "WORD", self.square, letter, self.word)

    def _check(self) -> None:
        _check_name(self.player)
        _check_square(self.x, self.y)
        _check_word(self.word)


@dataclass(frozen=True, slots=True)
class InformSwap(Message):
    """INFORMMOVE SWAP: ``player`` swapped ``count`` tiles; 0 is a pass (ERRATA)."""

    command = Command.INFORMMOVE
    player: str
    count: int

    def fields(self) -> tuple[str, ...]:
        return (self.player, "SWAP", str(self.count))

    def _check(self) -> None:
        _check_name(self.player)
        if not 0 <= self.count <= RACK_SIZE:
            raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"swapped count is 0 to {RACK_SIZE}")


@dataclass(frozen=True, slots=True)
class GameOver(Message):
    """GAMEOVER: why the game ended and every player's score, in seat order."""

    command = Command.GAMEOVER
    reason: GameOverReason
    scores: tuple[tuple[str, int], ...]

    def fields(self) -> tuple[str, ...]:
        flat = (part for name, score in self.scores for part in (name, str(score)))
        return (self.reason.value, *flat)

    def _check(self) -> None:
        _check_players(len(self.scores))
        _check_names([name for name, _ in self.scores])
        if any(abs(score) >= 10**_MAX_NUMBER_DIGITS for _, score in self.scores):
            raise _Invalid(ErrorCode.INVALID_ARGUMENT, "score out of range")


@dataclass(frozen=True, slots=True)
class PlayerDisconnected(Message):
    """PLAYERDISCONNECTED: a player of the game lost the connection."""

    command = Command.PLAYERDISCONNECTED
    player: str

    def fields(self) -> tuple[str, ...]:
        return (self.player,)

    def _check(self) -> None:
        _check_name(self.player)


@dataclass(frozen=True, slots=True)
class NotifyChat(Message):
    """NOTIFYCHAT (extension CHAT): a chat line from ``player``."""

    command = Command.NOTIFYCHAT
    player: str
    text: str

    def fields(self) -> tuple[str, ...]:
        return (self.player, self.text)

    def _check(self) -> None:
        _check_name(self.player)
        _check_chat(self.text)


# --- both ways ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Error(Message):
    """ERROR: an error code; E010 also carries the player count of the existing queue."""

    command = Command.ERROR
    code: ErrorCode
    players: int | None = None

    def fields(self) -> tuple[str, ...]:
        if self.players is None:
            return (self.code.value,)
        return (self.code.value, str(self.players))

    def _check(self) -> None:
        # spec E010: "This error will also have an argument ... (REQUIRED)"; no other has one.
        if self.code is ErrorCode.WRONG_NUMBER_OF_PLAYERS:
            if self.players is None:
                raise _Invalid(ErrorCode.INVALID_ARGUMENT, "E010 needs the player count")
            _check_players(self.players)
        elif self.players is not None:
            raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"{self.code.value} takes no count")

    def _check_received(self) -> None:
        # A peer's E010 without its count is still an E010 (liberal reading).
        if self.players is not None or self.code is not ErrorCode.WRONG_NUMBER_OF_PLAYERS:
            self._check()


ClientMessage = Announce | RequestGame | MakeWord | MakeSwap | SendChat | Error
ServerMessage = (
    Welcome
    | InformQueue
    | StartGame
    | NewTiles
    | NotifyTurn
    | InformWord
    | InformSwap
    | GameOver
    | PlayerDisconnected
    | NotifyChat
    | Error
)


# --- decoding -------------------------------------------------------------------------


def _announce(args: Sequence[str]) -> Announce:
    _arity(args, 1, 1 + len(args), "ANNOUNCE")
    return Announce(args[0], _flags(args[1:]))


def _welcome(args: Sequence[str]) -> Welcome:
    _arity(args, 1, 1 + len(args), "WELCOME")
    return Welcome(args[0], _flags(args[1:]))


def _request_game(args: Sequence[str]) -> RequestGame:
    _arity(args, 0, 1, "REQUESTGAME")
    text = _optional(args)
    return RequestGame(None if text is None else _int(text, "player count"))


def _make_move(args: Sequence[str]) -> MakeWord | MakeSwap:
    _arity(args, 1, 4, "MAKEMOVE")
    kind = args[0].strip().upper()
    if kind == "WORD":
        _arity(args, 4, 4, "MAKEMOVE WORD")
        x, y = _square(args[1])
        return MakeWord(x, y, _direction(args[2]), args[3])
    if kind == "SWAP":
        # spec E003 example: SWAP without the tile argument is E003; ERRATA: an empty
        # tile argument is a pass.
        _arity(args, 2, 2, "MAKEMOVE SWAP")
        return MakeSwap(args[1])
    if kind == "PASS":  # ERRATA: accepted as a synonym of MAKEMOVE SWAP with no tiles
        if len(args) > 2 or (len(args) == 2 and args[1] != ""):
            raise _Invalid(ErrorCode.INVALID_ARGUMENT, "MAKEMOVE PASS takes no tiles")
        return MakeSwap("")
    raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"move type is WORD or SWAP: {args[0][:20]!r}")


def _send_chat(args: Sequence[str]) -> SendChat:
    _arity(args, 1, 1, "SENDCHAT")
    return SendChat(args[0])


def _inform_queue(args: Sequence[str]) -> InformQueue:
    _arity(args, 2, 2, "INFORMQUEUE")
    return InformQueue(_int(args[0], "players waiting"), _int(args[1], "players required"))


def _start_game(args: Sequence[str]) -> StartGame:
    _arity(args, MIN_PLAYERS, MAX_PLAYERS, "STARTGAME")
    return StartGame(tuple(args))


def _new_tiles(args: Sequence[str]) -> NewTiles:
    _arity(args, 0, 1, "NEWTILES")  # no argument at all: nothing drawn (bag empty)
    return NewTiles(args[0] if args else "")


def _notify_turn(args: Sequence[str]) -> NotifyTurn:
    _arity(args, 2, 2, "NOTIFYTURN")
    flag = args[0].strip()
    if flag not in ("0", "1"):
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"NOTIFYTURN takes 0 or 1: {flag[:20]!r}")
    return NotifyTurn(flag == "1", args[1])


def _inform_move(args: Sequence[str]) -> InformWord | InformSwap:
    _arity(args, 2, 5, "INFORMMOVE")
    kind = args[1].strip().upper()
    if kind == "WORD":
        _arity(args, 5, 5, "INFORMMOVE WORD")
        x, y = _square(args[2])
        return InformWord(args[0], x, y, _direction(args[3]), args[4])
    if kind == "SWAP":
        _arity(args, 3, 3, "INFORMMOVE SWAP")
        return InformSwap(args[0], _swapped_count(args[2]))
    raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"move type is WORD or SWAP: {args[1][:20]!r}")


def _swapped_count(field: str) -> int:
    """The count of an INFORMMOVE SWAP (spec), or the swapped tiles themselves, as some
    servers send them ("PQG" for 3, "" for a pass): be liberal in what we accept (issue
    31: a bot that took letters for garbage kept the swapped tiles on its rack)."""
    text = field.strip()
    if not text.isdigit() and all(t.isascii() and (t.isalpha() or t in "!?") for t in text):
        if len(text) > RACK_SIZE:
            raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"swapped count is 0 to {RACK_SIZE}")
        return len(text)
    return _int(field, "swapped count")


def _game_over(args: Sequence[str]) -> GameOver:
    _arity(args, 1 + 2 * MIN_PLAYERS, 1 + 2 * MAX_PLAYERS, "GAMEOVER")
    try:
        reason = GameOverReason(args[0].strip().upper())
    except ValueError:
        raise _Invalid(
            ErrorCode.INVALID_ARGUMENT, f"GAMEOVER type is WIN or DISCONNECT: {args[0][:20]!r}"
        ) from None
    pairs = args[1:]
    if len(pairs) % 2:
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, "GAMEOVER takes name/score pairs")
    scores = tuple(
        (pairs[i], _int(pairs[i + 1], "score", signed=True)) for i in range(0, len(pairs), 2)
    )
    return GameOver(reason, scores)


def _player_disconnected(args: Sequence[str]) -> PlayerDisconnected:
    _arity(args, 1, 1, "PLAYERDISCONNECTED")
    return PlayerDisconnected(args[0])


def _notify_chat(args: Sequence[str]) -> NotifyChat:
    _arity(args, 2, 2, "NOTIFYCHAT")
    return NotifyChat(args[0], args[1])


def _error(args: Sequence[str]) -> Error:
    # Liberal: arguments past the code are ignored (some servers add a text); a missing
    # or unreadable E010 count is read as "not given".
    _arity(args, 1, 1 + len(args), "ERROR")
    try:
        code = ErrorCode.from_wire(args[0])
    except ValueError:
        raise _Invalid(ErrorCode.INVALID_ARGUMENT, f"unknown error code {args[0][:20]!r}") from None
    players = None
    if code is ErrorCode.WRONG_NUMBER_OF_PLAYERS and len(args) > 1:
        text = args[1].strip()
        if text.isascii() and text.isdigit() and len(text) == 1:
            players = int(text)
            if not MIN_PLAYERS <= players <= MAX_PLAYERS:
                players = None
    return Error(code, players)


_DECODERS: dict[Command, Callable[[Sequence[str]], Message]] = {
    Command.ANNOUNCE: _announce,
    Command.WELCOME: _welcome,
    Command.REQUESTGAME: _request_game,
    Command.INFORMQUEUE: _inform_queue,
    Command.STARTGAME: _start_game,
    Command.NOTIFYTURN: _notify_turn,
    Command.MAKEMOVE: _make_move,
    Command.NEWTILES: _new_tiles,
    Command.INFORMMOVE: _inform_move,
    Command.ERROR: _error,
    Command.GAMEOVER: _game_over,
    Command.PLAYERDISCONNECTED: _player_disconnected,
    Command.SENDCHAT: _send_chat,
    Command.NOTIFYCHAT: _notify_chat,
}


def decode_args(command: Command, args: Sequence[str]) -> Message:
    """The message ``command`` with ``args`` makes; RemoteProtocolError (E003/E004/...) if bad."""
    try:
        message = _DECODERS[command](args)
        message._check_received()
    except _Invalid as exc:
        raise RemoteProtocolError(exc.code, exc.reason) from None
    return message


def decode(fields: Sequence[str]) -> Message:
    """The message a frame's fields make; RemoteProtocolError with the reply's code if bad."""
    if not fields:
        raise RemoteProtocolError(ErrorCode.UNKNOWN_COMMAND, "empty message")
    return decode_args(Command.from_wire(fields[0]), fields[1:])


def parse(data: bytes) -> Message:
    """Exactly one whole message (with its RS) from bytes; for tests, tools and logs."""
    events = Framer().receive_data(data)
    if (
        len(events) != 1
        or not isinstance(events[0], Frame)
        or not data.rstrip(b"\r\n").endswith(b"\x1e")
    ):
        raise RemoteProtocolError(ErrorCode.INVALID_ARGUMENT, "not exactly one whole message")
    return decode(events[0].fields)
