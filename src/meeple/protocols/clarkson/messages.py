"""Every message of the Clarkson Scrabble RFC (v1.0.1) as a frozen dataclass.

Each message has ``encode() -> bytes`` (strict: what the RFC's grammar allows, CRLF
line ends) and is read back by :func:`decode_client` (a line a server receives) or
:func:`decode_server` (a line a client receives). BOARDPUSH spans 17 lines, so a client
reads server lines through :class:`ServerMessageReader`, which assembles it.

Decoding is liberal (docs/protocols/clarkson.md): commands in any case, extra blanks
between fields, lower-case letters, a HELLO missing its free-text fields. A line that
cannot be read raises :class:`RemoteProtocolError` whose ``description`` is the NOK
text to answer; an unknown command raises :class:`UnrecognizedCommand`.

Coordinates: ``PLACE (L,x,y)`` has ``x`` the column and ``y`` the row, 0–14 (ERRATA),
which are the engine's ``Placement(y, x, tile)`` fields.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from meeple.games.scrabble.board import BOARD_SIZE, STANDARD_LAYOUT, Board, Layout, Premium
from meeple.games.scrabble.moves import Placement
from meeple.protocols.clarkson.errors import (
    LocalProtocolError,
    RemoteProtocolError,
    UnrecognizedCommand,
)
from meeple.protocols.clarkson.framing import LineEvent, OversizedLine, encode_line

__all__ = [
    "DEFAULT_PORT",
    "MAX_NAME_LENGTH",
    "RACK_SIZE",
    "VERSION",
    "BoardPush",
    "ClientMessage",
    "Exchange",
    "Goodbye",
    "Hello",
    "Malformed",
    "Message",
    "Nok",
    "Ok",
    "Pass",
    "Place",
    "Quit",
    "Ready",
    "Score",
    "ServerMessage",
    "ServerMessageReader",
    "Starting",
    "Tiles",
    "Turn",
    "UserChange",
    "UserJoin",
    "UserSet",
    "Winner",
    "decode_client",
    "decode_server",
    "is_supported_version",
    "is_valid_name",
    "meeple_hello",
    "parse_version",
]

VERSION = "1.0.1"  # RFC §3.1: "Implementations compliant ... should report 1.0.1"
DEFAULT_PORT = 9000  # RFC §4
RACK_SIZE = 7  # RFC §3.12
MAX_NAME_LENGTH = 32  # the RFC sets none; names appear in every other client's display

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")  # RFC §2 <name>
# RFC §3.1 <version> ::= <number> '.' <number> '.'? <number>?  (digits capped: these
# are version numbers, and a huge one must not cost a big-integer conversion).
_VERSION = re.compile(r"(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9})?)?")
_NUMBER = re.compile(r"-?\d{1,9}")  # the RFC's <number> is unsigned; "-" read liberally
_COMMAND = re.compile(r"(\S+)(?:[ \t](.*))?", re.DOTALL)
_PLACEMENT = re.compile(r"\(\s*([^\s,()]*)\s*,\s*([^\s,()]*)\s*,\s*([^\s,()]*)\s*\)")
_CELL = re.compile(r"\(\s*([A-Za-z0])\s*,\s*([0-9])\s*\)")
# Between PLACE's (L,x,y) groups and BOARDPUSH's (X,m) cells: blanks and commas, read
# liberally.
_SEPARATORS = re.compile(r"[\s,]*")


def is_valid_name(name: str) -> bool:
    """True for a user name meeple accepts: RFC §2 ``<name>``, at most MAX_NAME_LENGTH."""
    return len(name) <= MAX_NAME_LENGTH and _NAME.fullmatch(name) is not None


def parse_version(text: str) -> tuple[int, int, int | None] | None:
    """``1.0.1`` to ``(1, 0, 1)``, ``1.0`` to ``(1, 0, None)``; None if not a <version>."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    patch = match.group(3)
    return int(match.group(1)), int(match.group(2)), None if patch is None else int(patch)


def is_supported_version(text: str) -> bool:
    """ERRATA: meeple speaks 1.0.1 and accepts 1.0 and any 1.0.x."""
    version = parse_version(text)
    return version is not None and version[:2] == (1, 0)


def _check_free_text(text: str, what: str) -> None:
    if not text:
        raise LocalProtocolError(f"{what} may not be empty")


def _check_name_field(name: str, what: str) -> None:
    """A name as it appears in server messages: any text, but one word, so it parses back."""
    if not name or name != name.strip() or any(c.isspace() for c in name):
        raise LocalProtocolError(f"{what} must be one non-empty word: {name!r}")


def _check_score(score: int) -> None:
    if score < 0:
        # RFC §2 <number> has no sign; the dialect clamps a negative total at 0.
        raise LocalProtocolError(f"the RFC has no negative numbers: {score}")


def _check_letters(tiles: str, what: str) -> None:
    if not all("A" <= c <= "Z" for c in tiles):
        raise LocalProtocolError(f"{what} must be letters A–Z: {tiles!r}")


class Message:
    """Base of every message: ``encode()`` gives the bytes to send, CRLF included."""

    __slots__ = ()
    command: ClassVar[str]

    def encode(self) -> bytes:
        return encode_line(self._text())

    def _text(self) -> str:
        return self.command


# --- both directions ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello(Message):
    """HELLO (§3.1): each side's version and platform; the server sends it first.

    ``system`` and ``program`` may not contain a comma (the RFC's ``<any>*`` ends at the
    next comma); ``author`` is the rest of the line and may.
    """

    command: ClassVar[str] = "HELLO"
    version: str
    system: str
    program: str
    author: str

    def _text(self) -> str:
        if parse_version(self.version) is None or self.version != self.version.strip():
            raise LocalProtocolError(f"not a version: {self.version!r}")
        for what, value in (("system", self.system), ("program", self.program)):
            _check_free_text(value, what)
            if "," in value:
                raise LocalProtocolError(f"HELLO's {what} may not contain a comma: {value!r}")
        _check_free_text(self.author, "author")
        return f"HELLO {self.version},{self.system},{self.program},{self.author}"


def meeple_hello(system: str, author: str = "meeple") -> Hello:
    """The HELLO meeple sends: version 1.0.1 and ``Python/<version>`` as §3.1 asks.

    ``system`` is the operating system (``platform.platform()``); the caller reads it,
    because this layer reads nothing from its environment.
    """
    python = ".".join(str(n) for n in sys.version_info[:3])
    return Hello(VERSION, system.replace(",", " ") or "unknown", f"Python/{python}", author)


# --- client to server -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quit(Message):
    """QUIT (§3.2): the client leaves; the server answers GOODBYE and closes."""

    command: ClassVar[str] = "QUIT"


@dataclass(frozen=True, slots=True)
class UserSet(Message):
    """USERSET (§3.5): the client asks for a name; USERCHANGE to all, or NOK if taken."""

    command: ClassVar[str] = "USERSET"
    name: str

    def _text(self) -> str:
        if not is_valid_name(self.name):
            raise LocalProtocolError(f"not a valid name: {self.name!r}")
        return f"USERSET {self.name}"


@dataclass(frozen=True, slots=True)
class Ready(Message):
    """READY (§3.8): the client wants the game to begin; it does once all are ready."""

    command: ClassVar[str] = "READY"


@dataclass(frozen=True, slots=True)
class Place(Message):
    """PLACE (§3.14): new tiles on the board, as the engine's Placements (x column, y row)."""

    command: ClassVar[str] = "PLACE"
    placements: tuple[Placement, ...]

    def _text(self) -> str:
        if not self.placements:
            raise LocalProtocolError("PLACE needs at least one tile")
        cells = []
        for p in self.placements:
            if len(p.tile) != 1 or not p.tile.isascii() or not p.tile.isalpha():
                raise LocalProtocolError(f"not a letter tile: {p.tile!r}")
            if not (0 <= p.x < BOARD_SIZE and 0 <= p.y < BOARD_SIZE):
                raise LocalProtocolError(f"square off the board: ({p.x}, {p.y})")
            cells.append(f"({p.tile.upper()},{p.x},{p.y})")
        return "PLACE " + " ".join(cells)


@dataclass(frozen=True, slots=True)
class Pass(Message):
    """PASS (§3.15): the client ends its turn doing nothing."""

    command: ClassVar[str] = "PASS"


@dataclass(frozen=True, slots=True)
class Exchange(Message):
    """EXCHANGE (§3.16): swap one tile, or all of them when ``tiles`` is None.

    The RFC allows one letter; meeple also reads several (``EXCHANGE AB``) as those tiles.
    """

    command: ClassVar[str] = "EXCHANGE"
    tiles: str | None = None

    def _text(self) -> str:
        if self.tiles is None:
            return "EXCHANGE"
        if not self.tiles:
            raise LocalProtocolError("EXCHANGE of no tiles: use None to exchange all")
        _check_letters(self.tiles, "EXCHANGE tiles")
        return f"EXCHANGE {self.tiles}"


# --- server to client -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Goodbye(Message):
    """GOODBYE (§3.1, §3.2): the server closes the connection after this line."""

    command: ClassVar[str] = "GOODBYE"


@dataclass(frozen=True, slots=True)
class Ok(Message):
    """OK (§3.3): the last command succeeded; ``description`` is free text, may be empty."""

    command: ClassVar[str] = "OK"
    description: str = ""

    def _text(self) -> str:
        return f"OK {self.description}" if self.description else "OK"


@dataclass(frozen=True, slots=True)
class Nok(Message):
    """NOK (§3.4): the last command failed and changed nothing; ``description`` says why."""

    command: ClassVar[str] = "NOK"
    description: str = ""

    def _text(self) -> str:
        return f"NOK {self.description}" if self.description else "NOK"


@dataclass(frozen=True, slots=True)
class UserChange(Message):
    """USERCHANGE (§3.6): a client's name changed from ``old`` to ``new``; sent to all."""

    command: ClassVar[str] = "USERCHANGE"
    old: str
    new: str

    def _text(self) -> str:
        _check_name_field(self.old, "USERCHANGE's old name")
        _check_name_field(self.new, "USERCHANGE's new name")
        return f"USERCHANGE {self.old} {self.new}"


@dataclass(frozen=True, slots=True)
class UserJoin(Message):
    """USERJOIN (§3.7): a client is in the lobby; sent before the game begins only."""

    command: ClassVar[str] = "USERJOIN"
    name: str

    def _text(self) -> str:
        _check_name_field(self.name, "USERJOIN's name")
        return f"USERJOIN {self.name}"


@dataclass(frozen=True, slots=True)
class Starting(Message):
    """STARTING (§3.9): everyone is ready and the game begins."""

    command: ClassVar[str] = "STARTING"


@dataclass(frozen=True, slots=True)
class Score(Message):
    """SCORE (§3.10): a player's total score (not the points of the turn)."""

    command: ClassVar[str] = "SCORE"
    score: int
    name: str

    def _text(self) -> str:
        _check_score(self.score)
        _check_name_field(self.name, "SCORE's name")
        return f"SCORE {self.score} {self.name}"


@dataclass(frozen=True, slots=True)
class BoardPush(Message):
    """BOARDPUSH (§3.11): the whole board, sent to all after every turn.

    ``tiles`` is 15 rows of 15 characters, ``A``–``Z`` or ``.`` for an empty square;
    ``premiums`` the square modifiers (their values are the RFC's codes 0–4). Build one
    with :meth:`from_board`; a client turns it back with :meth:`to_board`.

    On the wire (ERRATA): the line ``BOARDPUSH``, 15 lines of 15 ``(X,m)`` cells
    separated by single spaces (``0`` for an empty square), then an empty line.
    """

    command: ClassVar[str] = "BOARDPUSH"
    tiles: tuple[str, ...]
    premiums: tuple[tuple[Premium, ...], ...] = STANDARD_LAYOUT.premiums

    @classmethod
    def from_board(cls, board: Board) -> BoardPush:
        """The board as the RFC shows it: letters in upper case (Clarkson has no blanks)."""
        if board.size != BOARD_SIZE:
            raise LocalProtocolError(f"the RFC's board is {BOARD_SIZE}×{BOARD_SIZE}")
        return cls(tuple(row.upper() for row in board.rows()), board.layout.premiums)

    def to_board(self) -> Board:
        """A :class:`Board` with these tiles, on a layout of these premiums."""
        if self.premiums == STANDARD_LAYOUT.premiums:
            layout = STANDARD_LAYOUT
        else:
            layout = Layout(BOARD_SIZE, self.premiums, STANDARD_LAYOUT.centre)
        return Board.from_rows(self.tiles, layout)

    def encode(self) -> bytes:
        if len(self.tiles) != BOARD_SIZE or len(self.premiums) != BOARD_SIZE:
            raise LocalProtocolError(f"a board has {BOARD_SIZE} rows")
        lines = [self.command]
        for row, premiums in zip(self.tiles, self.premiums, strict=True):
            if len(row) != BOARD_SIZE or len(premiums) != BOARD_SIZE:
                raise LocalProtocolError(f"a row has {BOARD_SIZE} squares: {row!r}")
            cells = []
            for tile, premium in zip(row, premiums, strict=True):
                if tile != "." and not ("A" <= tile <= "Z"):
                    raise LocalProtocolError(f"not a board tile: {tile!r}")
                cells.append(f"({'0' if tile == '.' else tile},{int(Premium(premium))})")
            lines.append(" ".join(cells))
        lines.append("")  # the final <CRLF> of §3.11's <boardpush>: an empty line
        return b"".join(encode_line(line) for line in lines)


@dataclass(frozen=True, slots=True)
class Tiles(Message):
    """TILES (§3.12): the client's own tiles, up to 7 (fewer near the end of the game)."""

    command: ClassVar[str] = "TILES"
    tiles: str

    def _text(self) -> str:
        _check_letters(self.tiles, "TILES")
        if len(self.tiles) > RACK_SIZE:
            raise LocalProtocolError(f"a rack holds at most {RACK_SIZE} tiles: {self.tiles!r}")
        # The grammar's literal is "TILES " with its space, even before an empty rack.
        return f"TILES {self.tiles}"


@dataclass(frozen=True, slots=True)
class Turn(Message):
    """TURN (§3.13): whose turn it is now; sent to all."""

    command: ClassVar[str] = "TURN"
    name: str

    def _text(self) -> str:
        _check_name_field(self.name, "TURN's name")
        return f"TURN {self.name}"


@dataclass(frozen=True, slots=True)
class Winner(Message):
    """WINNER (§3.17): the game is over; the winner and their score. Clients then QUIT."""

    command: ClassVar[str] = "WINNER"
    score: int
    name: str

    def _text(self) -> str:
        _check_score(self.score)
        _check_name_field(self.name, "WINNER's name")
        return f"WINNER {self.score} {self.name}"


ClientMessage = Hello | Quit | UserSet | Ready | Place | Pass | Exchange
ServerMessage = (
    Hello
    | Goodbye
    | Ok
    | Nok
    | UserChange
    | UserJoin
    | Starting
    | Score
    | BoardPush
    | Tiles
    | Turn
    | Winner
)


# --- decoding -------------------------------------------------------------------------


def _split(line: str) -> tuple[str, str | None]:
    """``COMMAND rest`` to ``("COMMAND", "rest")``; commands are read in any case."""
    match = _COMMAND.fullmatch(line)
    if match is None:  # only an empty line, which the framer never yields
        raise UnrecognizedCommand("")
    return match.group(1).upper(), match.group(2)


def _check_no_args(command: str, rest: str | None) -> None:
    if rest is not None and rest.strip():
        raise RemoteProtocolError(f"{command} takes no arguments")


def _decode_ready(rest: str | None) -> Ready:
    _check_no_args(Ready.command, rest)
    return Ready()


def _decode_pass(rest: str | None) -> Pass:
    _check_no_args(Pass.command, rest)
    return Pass()


def _number(text: str, what: str) -> int:
    text = text.strip()
    if _NUMBER.fullmatch(text) is None:
        raise RemoteProtocolError(f"{what} must be a number: {text[:20]!r}")
    return int(text)


def _one_word(rest: str | None, what: str) -> str:
    word = (rest or "").strip()
    if not word:
        raise RemoteProtocolError(f"{what} needs a name")
    return word


def _decode_hello(rest: str | None) -> Hello:
    # Liberal: missing fields are empty; the session checks the version (ERRATA).
    fields = [*(rest or "").split(",", 3), "", "", ""]
    version, system, program, author = (f.strip() for f in fields[:4])
    return Hello(version, system, program, author)


def _decode_userset(rest: str | None) -> UserSet:
    name = (rest or "").strip()
    if not is_valid_name(name):
        raise RemoteProtocolError(
            f"invalid name: a name is a letter then letters or digits, "
            f"at most {MAX_NAME_LENGTH} characters"
        )
    return UserSet(name)


def _coordinate(text: str) -> int:
    # RFC §2 <number>: digits, read as an integer (so "07" is 7); capped before int().
    if not text.isascii() or not text.isdigit() or len(text) > 9 or int(text) >= BOARD_SIZE:
        raise RemoteProtocolError(
            f"PLACE coordinates are numbers 0 to {BOARD_SIZE - 1}: {text[:20]!r}"
        )
    return int(text)


def _skip_separators(text: str, pos: int) -> int:
    """The first position from ``pos`` that is not a blank or a comma."""
    match = _SEPARATORS.match(text, pos)
    return pos if match is None else match.end()


def _decode_place(rest: str | None) -> Place:
    rest = rest or ""
    placements = []
    pos = 0
    usage = "PLACE takes tiles as (L,x,y) (L,x,y) ... with x the column and y the row"
    while True:
        pos = _skip_separators(rest, pos)
        if pos == len(rest):
            break
        match = _PLACEMENT.match(rest, pos)
        if match is None:
            raise RemoteProtocolError(usage)
        letter, x, y = match.groups()
        if len(letter) != 1 or not letter.isascii() or not letter.isalpha():
            raise RemoteProtocolError(f"PLACE tiles are letters A to Z: {letter[:20]!r}")
        placements.append(Placement(_coordinate(y), _coordinate(x), letter.upper()))
        pos = match.end()
    if not placements:
        raise RemoteProtocolError(usage)
    return Place(tuple(placements))


def _decode_exchange(rest: str | None) -> Exchange:
    tiles = "".join((rest or "").split()).upper()
    if not tiles:
        return Exchange(None)
    if not all("A" <= c <= "Z" for c in tiles):
        raise RemoteProtocolError("EXCHANGE takes one tile letter A to Z, or none to swap all")
    return Exchange(tiles)


def _decode_quit(rest: str | None) -> Quit:
    return Quit()  # anything after QUIT is ignored: a client that wants to leave, leaves


def _decode_userchange(rest: str | None) -> UserChange:
    parts = (rest or "").split(None, 1)
    if len(parts) != 2:
        raise RemoteProtocolError("USERCHANGE needs the old and the new name")
    return UserChange(parts[0], parts[1].strip())


def _decode_scored(rest: str | None, what: str) -> tuple[int, str]:
    parts = (rest or "").split(None, 1)
    if len(parts) != 2:
        raise RemoteProtocolError(f"{what} needs a score and a name")
    return _number(parts[0], f"{what}'s score"), parts[1].strip()


def _decode_tiles(rest: str | None) -> Tiles:
    tiles = "".join((rest or "").split()).upper()
    if not all("A" <= c <= "Z" for c in tiles):
        raise RemoteProtocolError(f"TILES are letters A to Z: {tiles[:20]!r}")
    return Tiles(tiles)


def _description(rest: str | None) -> str:
    return rest or ""  # everything after the single separating space (§3.3)


_CLIENT_DECODERS: dict[str, Callable[[str | None], ClientMessage]] = {
    "HELLO": _decode_hello,
    "QUIT": _decode_quit,
    "USERSET": _decode_userset,
    "READY": _decode_ready,
    "PLACE": _decode_place,
    "PASS": _decode_pass,
    "EXCHANGE": _decode_exchange,
}

_SERVER_DECODERS: dict[str, Callable[[str | None], ServerMessage]] = {
    "HELLO": _decode_hello,
    "GOODBYE": lambda rest: Goodbye(),
    "OK": lambda rest: Ok(_description(rest)),
    "NOK": lambda rest: Nok(_description(rest)),
    "USERCHANGE": _decode_userchange,
    "USERJOIN": lambda rest: UserJoin(_one_word(rest, "USERJOIN")),
    "STARTING": lambda rest: Starting(),
    "SCORE": lambda rest: Score(*_decode_scored(rest, "SCORE")),
    "TILES": _decode_tiles,
    "TURN": lambda rest: Turn(_one_word(rest, "TURN")),
    "WINNER": lambda rest: Winner(*_decode_scored(rest, "WINNER")),
}


def decode_client(line: str) -> ClientMessage:
    """A line a client sent (framing already removed) to its message.

    Raise UnrecognizedCommand for a command a client may not send, RemoteProtocolError
    (with the NOK description) for a known command with unreadable arguments.
    """
    command, rest = _split(line)
    decoder = _CLIENT_DECODERS.get(command)
    if decoder is None:
        raise UnrecognizedCommand(command)
    return decoder(rest)


def decode_server(line: str) -> ServerMessage:
    """A single line the server sent to its message; BOARDPUSH needs ServerMessageReader.

    Raise UnrecognizedCommand or RemoteProtocolError as :func:`decode_client` does.
    """
    command, rest = _split(line)
    if command == BoardPush.command:
        raise RemoteProtocolError("BOARDPUSH spans several lines: use ServerMessageReader")
    decoder = _SERVER_DECODERS.get(command)
    if decoder is None:
        raise UnrecognizedCommand(command)
    return decoder(rest)


def _decode_board_row(line: str) -> tuple[str, tuple[Premium, ...]]:
    """One BOARDPUSH row of 15 ``(X,m)`` cells; liberal about blanks and commas between."""
    tiles, premiums = [], []
    pos = 0
    while True:
        pos = _skip_separators(line, pos)
        if pos == len(line):
            break
        match = _CELL.match(line, pos)
        if match is None or int(match.group(2)) > max(Premium):
            raise RemoteProtocolError(f"not a BOARDPUSH row: {line[:40]!r}")
        tile = match.group(1).upper()
        tiles.append("." if tile == "0" else tile)
        premiums.append(Premium(int(match.group(2))))
        pos = match.end()
    if len(tiles) != BOARD_SIZE:
        raise RemoteProtocolError(f"a BOARDPUSH row has {BOARD_SIZE} cells, not {len(tiles)}")
    return "".join(tiles), tuple(premiums)


@dataclass(frozen=True, slots=True)
class Malformed:
    """A line the reader could not make sense of; ``description`` says why."""

    line: str
    description: str


class ServerMessageReader:
    """Turns the lines a server sends into messages, assembling BOARDPUSH's 15 rows.

    Feed it the :class:`~meeple.protocols.clarkson.framing.LineEvent` values of a
    LineFramer with :meth:`feed`. The framer has already dropped BOARDPUSH's final empty
    line, so a board is complete after its 15th row. A line that is not a row ends the
    board early: the board is reported Malformed and the line read as a message.
    """

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: list[tuple[str, tuple[Premium, ...]]] | None = None

    @property
    def in_board(self) -> bool:
        """True between a BOARDPUSH line and its 15th row."""
        return self._rows is not None

    def feed(self, event: LineEvent) -> list[ServerMessage | Malformed]:
        """Read one line event; return the messages (and malformed lines) it completes."""
        out: list[ServerMessage | Malformed] = []
        if isinstance(event, OversizedLine):
            if self._rows is not None:
                self._rows = None
                out.append(Malformed("BOARDPUSH", "a BOARDPUSH row was too long"))
            out.append(Malformed("", f"line longer than {event.limit} bytes"))
            return out
        line = event.text
        if self._rows is not None:
            try:
                self._rows.append(_decode_board_row(line))
            except RemoteProtocolError as exc:
                self._rows = None
                out.append(Malformed("BOARDPUSH", exc.description))
            else:
                if len(self._rows) == BOARD_SIZE:
                    tiles = tuple(row for row, _ in self._rows)
                    premiums = tuple(p for _, p in self._rows)
                    self._rows = None
                    out.append(BoardPush(tiles, premiums))
                return out
        try:
            command, _ = _split(line)
            if command == BoardPush.command:
                self._rows = []
            else:
                out.append(decode_server(line))
        except RemoteProtocolError as exc:
            out.append(Malformed(line, exc.description))
        return out
