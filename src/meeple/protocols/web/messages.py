"""Every message of the browser protocol, as frozen dataclasses with encode/decode.

Every message is one WebSocket text message holding one JSON object with a
``"type"``. Browser → server: :class:`Hello`, :class:`Subscribe`,
:class:`Unsubscribe`, :class:`Ping`, and to play (issue 13) :class:`CreateTable`,
:class:`Sit`, :class:`Rejoin`, :class:`AddBot`, :class:`Ready`, :class:`Leave`,
:class:`Abort`, :class:`Play`. Server → browser: :class:`Welcome`, :class:`Snapshot` (``lobby``,
``game`` and ``console`` topics), :class:`Pong`, :class:`Error`, and to a player
:class:`Seated`, :class:`SeatView` and :class:`Unseated`. :func:`decode` takes a size
limit and raises :class:`~.errors.RemoteProtocolError` for anything malformed, which
the session turns into an :class:`Error` reply. A :class:`Play` action is checked for shape
here (kinds, coordinates, lengths); what it means is the game's (the server's web
seat turns it into a room command, and the engine says whether it is legal).
:class:`Chat` (browser → server) and :class:`ChatLine` (server → browser) carry a
player's chat line to and from the seat's room; :class:`WatchChat` and
:class:`WatchChatLine` the spectators' own chat of a game they watch (issue 34.5).

A Scrabble player may also ask what a play would score before sending it (issue 13):
:class:`Preview` in, :class:`PreviewReply` out.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from meeple.protocols.web.errors import ErrorCode, RemoteProtocolError

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "GAMES",
    "MAX_CHAT_LENGTH",
    "PROTOCOL",
    "TOPICS",
    "Abort",
    "AddBot",
    "Chat",
    "ChatLine",
    "ClientMessage",
    "Command",
    "CreateTable",
    "Delta",
    "Error",
    "Hello",
    "Leave",
    "Ping",
    "Play",
    "Pong",
    "Preview",
    "PreviewReply",
    "Ready",
    "Rejoin",
    "SeatView",
    "Seated",
    "ServerMessage",
    "Sit",
    "Snapshot",
    "Subscribe",
    "Unseated",
    "Unsubscribe",
    "WatchChat",
    "WatchChatLine",
    "Welcome",
    "chat_text_problem",
    "decode",
    "watch_chat_problem",
]

PROTOCOL = "meeple-web/1"
# Browser messages are small (the largest is a subscribe); 4 KiB leaves room for issue 13.
DEFAULT_MAX_MESSAGE_SIZE = 4096
# What a browser may watch: the lobby, one game (by its uid), the CMPN402 console.
TOPICS = ("lobby", "game", "console")
_UID = re.compile(r"[0-9a-f]{1,32}")
_MAX_ID = 2**31 - 1
_NONE: frozenset[str] = frozenset()
GAMES = ("scrabble", "santorini", "spectrangle")
# A player's name: what every protocol can carry (no spaces: Spectrangle lines split on them).
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,24}")
_WORD = re.compile(r"[A-Za-z0-9_.-]{1,32}")
_LEVEL = re.compile(r"[a-z]{1,16}")  # variants, table ids, levels, gods, tiles
_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,64}")
_CLOCK = re.compile(r"[0-9]{1,2}\+[0-9]{1,2}")
# Play action kinds, and the fields each takes (values checked in _action).
_ACTIONS: dict[str, frozenset[str]] = {
    "place": frozenset({"tiles", "tile", "index", "cell", "sex"}),
    "exchange": frozenset({"tiles", "tile"}),
    "pass": frozenset(),
    "skip": frozenset(),
    "god": frozenset({"god"}),
    "starter": frozenset({"player"}),
    "move": frozenset({"from", "to"}),
    "build": frozenset({"from", "to", "level"}),
    "undo": frozenset({"all"}),
    "lose": frozenset(),
    # Scrabble's challenge window (a table variant with challenges, issue 13).
    "challenge": frozenset(),
    "accept": frozenset(),
}
_MAX_TILES = 7
_BOARD = 15  # the largest board a play names (Scrabble's); games check their own


@dataclass(frozen=True, slots=True)
class Hello:
    """The browser's first message: the protocol it speaks."""

    protocol: str


@dataclass(frozen=True, slots=True)
class Subscribe:
    """Watch a topic: ``lobby``, ``console``, or ``game`` with the game's ``uid``.

    ``delta``: after the whole snapshot, send only what changed (:class:`Delta`)."""

    topic: str
    uid: str | None = None
    delta: bool = False


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    topic: str
    uid: str | None = None


@dataclass(frozen=True, slots=True)
class Ping:
    """Answered by a :class:`Pong` with the same ``id`` (a liveness check from the page)."""

    id: int


@dataclass(frozen=True, slots=True)
class CreateTable:
    """Open a table (``start``: ``full`` or ``ready``) and sit at it as ``name``.

    ``clock``: a time control, minutes+increment seconds (``"25+0"``, ``"5+3"``; empty:
    none); ``lexicon``: a Scrabble table's word list (empty: the server's default).
    Which values a game takes is the server's to decide (docs/web.md, "Clocks").
    """

    game: str
    variant: str
    size: int
    start: str
    name: str
    clock: str = ""
    lexicon: str = ""


@dataclass(frozen=True, slots=True)
class Sit:
    """Sit at an open table of the lobby as ``name``."""

    table: str
    name: str


@dataclass(frozen=True, slots=True)
class Rejoin:
    """Take back the seat this token was given for (after a reload or a drop)."""

    token: str


@dataclass(frozen=True, slots=True)
class AddBot:
    """Seat a server-side bot at a table (``level``: one of the server's bot levels)."""

    table: str
    level: str = "hard"


@dataclass(frozen=True, slots=True)
class Ready:
    """Say ready (a table that starts when everyone is ready)."""


@dataclass(frozen=True, slots=True)
class Leave:
    """Stand up from the table before its game starts."""


@dataclass(frozen=True, slots=True)
class Abort:
    """End the seat's game unrated while its player has not moved yet (issue 34.4); once
    they have, the server answers ``error`` ``illegal`` and only ``leave`` (resign) is left."""


@dataclass(frozen=True, slots=True)
class Play:
    """One game action of the seat's own player; ``kind`` and its fields, shape-checked.

    Scrabble: ``place`` with ``tiles`` ``[[x, y, "A"], ...]`` (a blank is the lower-case
    letter it stands for), ``exchange`` with ``tiles`` ``"AB?"``, ``pass``.
    Santorini: ``god`` with ``god``, ``starter`` with ``player`` (a seat index),
    ``place`` with ``cell`` ``[row, column]`` and ``sex`` ``M``/``F``, ``move`` and
    ``build`` with ``from``/``to`` cells (``build`` ``level`` for a dome: 4), ``undo``
    with ``all``, ``pass``, ``lose``. Spectrangle: ``place`` with ``tile`` and
    ``index``, ``exchange`` with ``tile``, ``skip``.
    """

    kind: str
    args: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.args).get(key, default)


# --- chat (issue 13): the lines; their checks are at the end of the module

# Characters; a line every protocol that relays chat carries (Twente allows 1000).
MAX_CHAT_LENGTH = 500
# Control characters (C0, C1, DEL), lone surrogates (unencodable, so no other protocol
# could relay them) and line or paragraph separators (a line protocol would split them).
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


@dataclass(frozen=True, slots=True)
class Chat:
    """A chat line from the seat's player, for the other players of its game."""

    text: str


@dataclass(frozen=True, slots=True)
class ChatLine:
    """A chat line said in the seat's game (``sender``: the player's name; the seat's
    own lines come back too, as the relay's receipt)."""

    sender: str
    text: str

    def encode(self) -> str:
        return _dump({"type": "chat", "from": self.sender, "text": self.text})


# The spectators' chat (issue 34.5): apart from the players', for those watching a game.
@dataclass(frozen=True, slots=True)
class WatchChat:
    """A spectator's line for the others watching game ``uid`` (the sender must watch it:
    ``subscribe`` ``game``), said as ``name``: the players do not hear it."""

    uid: str
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class WatchChatLine:
    """A line of the spectators' chat of game ``uid``; written to every watcher of the
    game at once (web/fanout.py), so it is encoded once."""

    uid: str
    sender: str
    text: str

    def encode(self) -> str:
        line = {"type": "watch-chat", "uid": self.uid, "from": self.sender, "text": self.text}
        return _dump(line)


# The Scrabble preview (issue 13): what a play would score, before it is sent.
@dataclass(frozen=True, slots=True)
class Preview:
    """What would these tiles score? Scrabble only: a ``place`` action's ``tiles``.

    ``id`` (optional, 0 to 2**31 - 1) comes back in the reply, so a page that asks on
    every keystroke knows which answer is the latest.
    """

    tiles: tuple[tuple[int, int, str], ...]
    id: int | None = None


# What the listener acts on: every client message but the two the session answers
# itself (Hello with Welcome, Ping with Pong).
Command = (
    Subscribe
    | Unsubscribe
    | CreateTable
    | Sit
    | Rejoin
    | AddBot
    | Ready
    | Leave
    | Abort
    | Play
    | Chat
    | WatchChat
    | Preview
)

ClientMessage = Hello | Ping | Command


@dataclass(frozen=True, slots=True)
class Welcome:
    protocol: str
    max_message_size: int

    def encode(self) -> str:
        return _dump(
            {
                "type": "welcome",
                "protocol": self.protocol,
                "max_message_size": self.max_message_size,
            }
        )


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A whole view of a topic (never a diff); ``data`` is its JSON text, made once."""

    topic: str
    uid: str | None
    seq: int
    data: str

    def encode(self) -> str:
        # The snapshot's JSON is spliced in as made, so 1,000 spectators cost one dumps.
        head = _dump({"type": self.topic, "uid": self.uid, "seq": self.seq})
        return f'{head[:-1]},"data":{self.data}}}'


@dataclass(frozen=True, slots=True)
class Delta:
    """What changed in a topic from snapshot ``base`` to snapshot ``seq``: ``patch`` is
    the JSON text of an RFC 6902 patch (:mod:`.delta`), made once for every spectator.

    Sent only to a subscriber that asked for deltas and holds snapshot ``base``
    (docs/protocols/web.md, "Deltas")."""

    topic: str
    uid: str | None
    seq: int
    base: int
    patch: str

    def encode(self) -> str:
        head = _dump({"type": self.topic, "uid": self.uid, "seq": self.seq, "base": self.base})
        return f'{head[:-1]},"patch":{self.patch}}}'


@dataclass(frozen=True, slots=True)
class Pong:
    id: int

    def encode(self) -> str:
        return _dump({"type": "pong", "id": self.id})


@dataclass(frozen=True, slots=True)
class Error:
    """The protocol's error reply; the connection stays open after it."""

    code: ErrorCode
    message: str

    def encode(self) -> str:
        return _dump({"type": "error", "code": self.code.value, "message": self.message})


@dataclass(frozen=True, slots=True)
class Seated:
    """You sit at ``table`` as ``name``; keep ``token`` to take the seat back."""

    table: str
    name: str
    token: str

    def encode(self) -> str:
        return _dump(
            {"type": "seated", "table": self.table, "name": self.name, "token": self.token}
        )


@dataclass(frozen=True, slots=True)
class Unseated:
    """You no longer sit at ``table`` (a table's id or the game's uid), and did not ask:
    ``reason`` ``rejoined`` says another connection presented your token and has the seat."""

    table: str
    reason: str = "rejoined"

    def encode(self) -> str:
        return _dump({"type": "unseated", "table": self.table, "reason": self.reason})


@dataclass(frozen=True, slots=True)
class SeatView:
    """The whole game as your seat sees it (your own rack or hand included), after every
    change; ``data`` is the game's ``seat_view`` (JSON text)."""

    game: str
    uid: str
    data: str

    def encode(self) -> str:
        head = _dump({"type": "seat", "game": self.game, "uid": self.uid})
        return f'{head[:-1]},"data":{self.data}}}'


# --- the Scrabble preview (issue 13): what a play would score, before it is sent ---------


@dataclass(frozen=True, slots=True)
class PreviewReply:
    """The engine's verdict on a :class:`Preview`: ``result`` is the game's ``preview``
    (``score``, ``words``, ``bingo``, or ``refusal``), sent as fields of the message."""

    id: int | None
    result: tuple[tuple[str, Any], ...]

    def encode(self) -> str:
        return _dump({"type": "preview", "id": self.id, **dict(self.result)})


def _preview(obj: dict[str, Any]) -> Preview:
    _fields(obj, {"action"}, {"id"})
    ident = obj.get("id")
    if ident is not None:
        ident = _int(ident, 0, _MAX_ID, "id")
    action = _action(obj["action"])
    if action.kind != "place" or set(dict(action.args)) != {"tiles"}:
        raise _bad("a preview's action is a place with tiles")
    return Preview(action.get("tiles"), ident)


# ----------------------------------------------------------------------------------------

ServerMessage = (
    Welcome
    | Snapshot
    | Delta
    | Pong
    | Error
    | Seated
    | Unseated
    | SeatView
    | ChatLine
    | WatchChatLine
    | PreviewReply
)


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _bad(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(ErrorCode.BAD_MESSAGE, message)


def _fields(
    obj: dict[str, Any], required: AbstractSet[str], optional: AbstractSet[str] = _NONE
) -> None:
    keys = set(obj) - {"type"}
    missing = required - keys
    extra = keys - required - optional
    if missing:
        raise _bad(f"missing field: {', '.join(sorted(missing))}")
    if extra:
        raise _bad(f"unknown field: {', '.join(sorted(extra))}")


def _topic(obj: dict[str, Any]) -> tuple[str, str | None]:
    _fields(obj, {"topic"}, {"uid"})
    topic, uid = obj["topic"], obj.get("uid")
    if topic not in TOPICS:
        raise _bad(f"topic must be one of {', '.join(TOPICS)}")
    if topic == "game":
        if not isinstance(uid, str) or not _UID.fullmatch(uid):
            raise _bad("a game topic needs the game's uid (hex digits)")
    elif uid is not None:
        raise _bad(f"the {topic} topic takes no uid")
    return topic, uid


def decode(data: str | bytes, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> ClientMessage:
    """One browser message; :class:`RemoteProtocolError` says what is wrong with it."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_size:
        raise RemoteProtocolError(
            ErrorCode.TOO_LARGE, f"message of {size} bytes; the limit is {max_size}"
        )
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise RemoteProtocolError(ErrorCode.BAD_JSON, "not a JSON text") from e
    if not isinstance(obj, dict):
        raise RemoteProtocolError(ErrorCode.BAD_JSON, "a message is a JSON object")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise _bad('a message needs a "type" string')
    if kind == "hello":
        _fields(obj, {"protocol"})
        if not isinstance(obj["protocol"], str):
            raise _bad("protocol must be a string")
        return Hello(obj["protocol"])
    if kind == "subscribe":
        delta = obj.pop("delta", False)
        if not isinstance(delta, bool):
            raise _bad("delta must be true or false")
        return Subscribe(*_topic(obj), delta=delta)
    if kind == "unsubscribe":
        return Unsubscribe(*_topic(obj))
    if kind == "ping":
        _fields(obj, {"id"})
        ident = obj["id"]
        if not isinstance(ident, int) or isinstance(ident, bool) or not 0 <= ident <= _MAX_ID:
            raise _bad("id must be an integer 0 to 2147483647")
        return Ping(ident)
    if kind == "watch-chat":
        return _watch_chat(obj)
    if kind == "chat":
        return _chat(obj)
    if kind == "preview":
        return _preview(obj)
    return _play_message(kind, obj)


def _text(obj: dict[str, Any], key: str, pattern: re.Pattern[str], what: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise _bad(f"{key} must be {what}")
    return value


def _int(value: Any, low: int, high: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise _bad(f"{what} must be an integer {low} to {high}")
    return value


def _cell(value: Any, what: str) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise _bad(f"{what} must be [row, column]")
    return _int(value[0], 0, _BOARD - 1, what), _int(value[1], 0, _BOARD - 1, what)


def _play_message(kind: str, obj: dict[str, Any]) -> ClientMessage:
    name = "letters, digits, _ . - (1 to 24)"
    if kind == "create":
        _fields(obj, {"game", "variant", "size", "name"}, {"start", "clock", "lexicon"})
        game = obj["game"]
        if game not in GAMES:
            raise _bad(f"game must be one of {', '.join(GAMES)}")
        start = obj.get("start", "full")
        if start not in ("full", "ready"):
            raise _bad("start must be full or ready")
        # docs/protocols/web.md, "Playing": create's clock and lexicon (issue 24).
        clock = obj.get("clock", "")
        if not isinstance(clock, str) or (clock and not _CLOCK.fullmatch(clock)):
            raise _bad("clock must be minutes+seconds, as 25+0 or 5+3")
        lexicon = obj.get("lexicon", "")
        if not isinstance(lexicon, str) or (lexicon and not _WORD.fullmatch(lexicon)):
            raise _bad("lexicon must be a word list's name (enable, gcide, ...)")
        return CreateTable(
            game,
            _text(obj, "variant", _WORD, "a variant name"),
            _int(obj["size"], 1, 8, "size"),
            start,
            _text(obj, "name", _NAME, name),
            clock,
            lexicon,
        )
    if kind == "sit":
        _fields(obj, {"table", "name"})
        return Sit(_text(obj, "table", _WORD, "a table id"), _text(obj, "name", _NAME, name))
    if kind == "rejoin":
        _fields(obj, {"token"})
        return Rejoin(_text(obj, "token", _TOKEN, "a rejoin token"))
    if kind == "bot":
        _fields(obj, {"table"}, {"level"})
        # The server's bot levels (docs/server.md, Bots) decide; here only the shape.
        level = obj.get("level", "hard")
        if not isinstance(level, str) or not _LEVEL.fullmatch(level):
            raise _bad("level must be a bot level's name (easy, hard, ...)")
        return AddBot(_text(obj, "table", _WORD, "a table id"), level)
    if kind == "ready":
        _fields(obj, _NONE)
        return Ready()
    if kind == "leave":
        _fields(obj, _NONE)
        return Leave()
    if kind == "abort":
        _fields(obj, _NONE)
        return Abort()
    if kind == "play":
        _fields(obj, {"action"})
        return _action(obj["action"])
    raise RemoteProtocolError(ErrorCode.UNKNOWN_TYPE, f"no message type {kind[:40]!r}")


def _action(action: Any) -> Play:
    if not isinstance(action, dict):
        raise _bad("action must be an object")
    kind = action.get("kind")
    if not isinstance(kind, str) or kind not in _ACTIONS:
        raise _bad(f"action kind must be one of {', '.join(_ACTIONS)}")
    extra = set(action) - {"kind"} - _ACTIONS[kind]
    if extra:
        raise _bad(f"unknown field in a {kind} action: {', '.join(sorted(extra))[:80]}")
    args: dict[str, Any] = {}
    for key, value in action.items():
        if key == "kind":
            continue
        if key == "tiles" and kind == "place":
            if not isinstance(value, list) or not 1 <= len(value) <= _MAX_TILES:
                raise _bad(f"tiles must list 1 to {_MAX_TILES} [x, y, letter]")
            tiles = []
            for t in value:
                if not isinstance(t, list) or len(t) != 3:
                    raise _bad("a tile is [x, y, letter]")
                x, y = _int(t[0], 0, _BOARD - 1, "x"), _int(t[1], 0, _BOARD - 1, "y")
                if not isinstance(t[2], str) or not re.fullmatch(r"[A-Za-z]", t[2]):
                    raise _bad("a tile's letter is A-Z, or a-z for a blank")
                tiles.append((x, y, t[2]))
            args[key] = tuple(tiles)
        elif key == "tiles":
            if not isinstance(value, str) or not re.fullmatch(r"[A-Z?]{1,7}", value):
                raise _bad("tiles to exchange are 1 to 7 of A-Z and ?")
            args[key] = value
        elif key in ("tile", "god"):
            args[key] = _text(action, key, _WORD, f"a {key} name")
        elif key == "sex":
            if value not in ("M", "F"):
                raise _bad("sex must be M or F")
            args[key] = value
        elif key in ("cell", "from", "to"):
            args[key] = _cell(value, key)
        elif key == "index":
            args[key] = _int(value, 0, 255, "index")
        elif key == "player":
            args[key] = _int(value, 0, 7, "player")
        elif key == "level":
            args[key] = None if value is None else _int(value, 0, 4, "level")
        elif key == "all":
            if not isinstance(value, bool):
                raise _bad("all must be true or false")
            args[key] = value
    return Play(kind, tuple(sorted(args.items())))


# --- chat (issue 13): checking a line from the browser


def chat_text_problem(text: str) -> str | None:
    """Why ``text`` is not a chat line the browser may send, or None if it is."""
    if not text.strip():
        return "a chat line needs some text"
    if len(text) > MAX_CHAT_LENGTH:
        return f"a chat line has at most {MAX_CHAT_LENGTH} characters"
    if any(unicodedata.category(c) in _FORBIDDEN_CATEGORIES for c in text):
        return "a chat line is one line of text without control characters"
    return None


def watch_chat_problem(uid: str, name: str, text: str) -> str | None:
    """Why a spectators' chat line is not one a browser could have sent (a game's uid, a
    name, one line of text within the limits), or None if it is: for lines that come from
    elsewhere than a browser (another cluster edge, :mod:`meeple.node.chat`)."""
    if not _UID.fullmatch(uid):
        return "not a game's uid"
    if not _NAME.fullmatch(name):
        return "not a name"
    return chat_text_problem(text)


def _watch_chat(obj: dict[str, Any]) -> WatchChat:
    _fields(obj, {"uid", "name", "text"})
    uid = _text(obj, "uid", _UID, "a game's uid")
    name = _text(obj, "name", _NAME, "letters, digits, _ . - (1 to 24)")
    return WatchChat(uid, name, _chat_text(obj))


def _chat(obj: dict[str, Any]) -> Chat:
    _fields(obj, {"text"})
    return Chat(_chat_text(obj))


def _chat_text(obj: dict[str, Any]) -> str:
    text = obj["text"]
    if not isinstance(text, str):
        raise _bad("text must be a string")
    problem = chat_text_problem(text)
    if problem is not None:
        raise _bad(problem)
    return text
