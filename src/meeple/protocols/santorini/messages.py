"""AM27 messages: the double-JSON envelope and every message as a frozen dataclass.

Every message is ``{"type": T, "message": "<JSON text>"}`` (spec §1): ``message`` is
itself a JSON document serialised into a string (ERRATA: accept a nested object too).
:func:`decode` turns an envelope's text into a message; ``encode()`` on a message gives
the envelope's text, byte for byte as the group's implementation writes it:

- compact JSON; in server messages the nickname field ``player`` comes last, as
  Gson writes a subclass's fields before its superclass's (transcript);
- maps with coordinate keys are lists of ``[key, value]`` pairs, and an empty map is
  ``{}`` (ERRATA); lists of cells stay lists (``[]`` when empty);
- names as the implementation sends them: ``UPDATE``, ``CHOSESTARTER`` (``STARTER``
  accepted), undo's ``all`` (``isAll`` accepted), ``buildableCells`` (ERRATA).

Decoding is strict about types (a row is an int, a nickname a string) and liberal
about shape (nested or string ``message``, unknown extra fields ignored). A message
that cannot be read raises :class:`MessageError`; the session turns that into INFO.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "CLIENT_TYPES",
    "SERVER_TYPES",
    "Build",
    "Cell",
    "CellState",
    "ChooseStarter",
    "ClientMessage",
    "EndGame",
    "God",
    "GodInit",
    "GodList",
    "Info",
    "InfoCode",
    "Lose",
    "Message",
    "MessageError",
    "MessageType",
    "Move",
    "Pass",
    "Ping",
    "Players",
    "Register",
    "ServerMessage",
    "ServerState",
    "Undo",
    "Update",
    "WorkerInit",
    "decode",
]

BOARD_SIZE = 5  # ERRATA: rows and columns are 0–4


class MessageError(ValueError):
    """A message that cannot be read: not JSON, no type, a field missing or mistyped."""


class MessageType(enum.Enum):
    """The envelope's ``type``; the value is the name on the wire."""

    SERVERSTATE = "SERVERSTATE"
    REGISTER = "REGISTER"
    GODLISTMESSAGE = "GODLISTMESSAGE"
    GODINIT = "GODINIT"
    PLAYERSMESSAGE = "PLAYERSMESSAGE"
    CHOSESTARTER = "CHOSESTARTER"
    UPDATE = "UPDATE"
    INFO = "INFO"
    ENDGAME = "ENDGAME"
    WORKERINIT = "WORKERINIT"
    MOVE = "MOVE"
    BUILD = "BUILD"
    UNDO = "UNDO"
    PASS = "PASS"
    LOSE = "LOSE"
    PING = "PING"

    @classmethod
    def from_wire(cls, name: str) -> MessageType:
        """The type named ``name``; the spec's ``STARTER`` is ``CHOSESTARTER`` (ERRATA)."""
        name = name.strip().upper()
        if name == "STARTER":
            return cls.CHOSESTARTER
        try:
            return cls(name)
        except ValueError:
            raise MessageError(f"unknown message type {name[:40]!r}") from None


class InfoCode(enum.Enum):
    """INFO ``information`` codes meeple sends (ERRATA names NICKNAME, WAIT, OCCUPIED).

    The spec leaves the list open; meeple adds INVALID and MALFORMED (see the docs).
    """

    NICKNAME = "NICKNAME"  # REGISTER: the nickname is taken or unusable
    WAIT = "WAIT"  # not now: not your turn, or the game is not at that step
    OCCUPIED = "OCCUPIED"  # WORKERINIT on a cell that holds a worker
    INVALID = "INVALID"  # the rules refuse the action (or its arguments are wrong)
    MALFORMED = "MALFORMED"  # the message could not be read at all


@dataclass(frozen=True, slots=True, order=True)
class Cell:
    """A board cell: ``{"row": r, "column": c}``, both 0–4."""

    row: int
    column: int

    def to_json(self) -> dict[str, int]:
        return {"row": self.row, "column": self.column}

    @classmethod
    def from_json(cls, value: object, what: str = "cell") -> Cell:
        obj = _object(value, what)
        row, column = _int(obj, "row", what), _int(obj, "column", what)
        if not (0 <= row < BOARD_SIZE and 0 <= column < BOARD_SIZE):
            raise MessageError(f"{what} ({row}, {column}) is off the board")
        return cls(row, column)


@dataclass(frozen=True, slots=True)
class CellState:
    """What a cell holds: levels top first (``[3,2,1,0]``; a dome is 4) and a worker."""

    levels: tuple[int, ...]
    owner: str | None = None
    sex: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"levelList": list(self.levels)}
        if self.owner is not None:
            out["workerOwner"] = self.owner
        if self.sex is not None:
            out["workerSex"] = self.sex
        return out

    @classmethod
    def from_json(cls, value: object) -> CellState:
        obj = _object(value, "cell state")
        levels = tuple(_int_item(v, "levelList") for v in _list(obj.get("levelList"), "levelList"))
        return cls(levels, _opt_str(obj, "workerOwner"), _opt_str(obj, "workerSex"))


@dataclass(frozen=True, slots=True)
class God:
    """A god on offer: ``{"name": ..., "description": ...}``."""

    name: str
    description: str = ""


# --- the base ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every message: ``TYPE`` on the wire, ``body()`` inside the envelope."""

    TYPE: ClassVar[MessageType]

    def body(self) -> dict[str, object]:
        raise NotImplementedError

    def encode(self) -> str:
        """The envelope's JSON text: ``{"type":T,"message":"<body as JSON text>"}``."""
        inner = _dumps(self.body())
        return _dumps({"type": self.TYPE.value, "message": inner})

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Message:
        raise NotImplementedError


# --- both ways -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ping(Message):
    """Heartbeat (spec §1): the server sends ``ping``, the group's bots ``AIping``."""

    TYPE: ClassVar[MessageType] = MessageType.PING
    message: str = "ping"

    def body(self) -> dict[str, object]:
        return {"message": self.message}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Ping:
        value = body.get("message", "")
        return cls(value if isinstance(value, str) else "")


# --- server → client -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServerState(Message):
    """§2.1: ``open`` (the client is accepted) and ``active`` (a game waits for players)."""

    TYPE: ClassVar[MessageType] = MessageType.SERVERSTATE
    open: bool
    active: bool

    def body(self) -> dict[str, object]:
        return {"open": self.open, "active": self.active}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> ServerState:
        return cls(_bool(body, "open"), _bool(body, "active"))


@dataclass(frozen=True, slots=True)
class GodList(Message):
    """§3.1.1: ``player`` is to choose one of ``gods`` (those still free)."""

    TYPE: ClassVar[MessageType] = MessageType.GODLISTMESSAGE
    player: str
    gods: tuple[God, ...]

    def body(self) -> dict[str, object]:
        return {
            "godList": [{"name": g.name, "description": g.description} for g in self.gods],
            "player": self.player,
        }

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> GodList:
        gods = []
        for item in _list(body.get("godList"), "godList"):
            obj = _object(item, "god")
            description = obj.get("description", "")
            gods.append(God(_str(obj, "name"), description if isinstance(description, str) else ""))
        return cls(_str(body, "player"), tuple(gods))


@dataclass(frozen=True, slots=True)
class Players(Message):
    """§3.2.1: every nickname with its god (``Atheist`` without gods); ``player`` picks
    the starter. ERRATA: ``players`` is an object ``{"nick": "God"}``."""

    TYPE: ClassVar[MessageType] = MessageType.PLAYERSMESSAGE
    player: str
    players: tuple[tuple[str, str], ...]

    def body(self) -> dict[str, object]:
        return {"players": dict(self.players), "player": self.player}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Players:
        raw = body.get("players")
        pairs: list[tuple[str, str]] = []
        if isinstance(raw, dict):
            for nick, god in raw.items():
                pairs.append((nick, god if isinstance(god, str) else ""))
        else:  # the spec's own drawing: a list of [nick, god] pairs
            for item in _list(raw, "players"):
                pair = _list(item, "players entry")
                if len(pair) != 2 or not all(isinstance(p, str) for p in pair):
                    raise MessageError("a players entry is [nickname, god]")
                pairs.append((pair[0], pair[1]))
        return cls(_str(body, "player"), tuple(pairs))


@dataclass(frozen=True, slots=True)
class Update(Message):
    """§4.1.1: what changed on the board, and what the recipient may do now.

    ``player`` is the active player. The maps are per worker (its cell): the cells it
    can reach, and the cells it can build on with the levels it may build there.
    ERRATA: a player whose turn it is not gets empty maps and all flags false.
    """

    TYPE: ClassVar[MessageType] = MessageType.UPDATE
    player: str
    board: tuple[tuple[Cell, CellState], ...] = ()
    reachable: tuple[tuple[Cell, tuple[Cell, ...]], ...] = ()
    buildable: tuple[tuple[Cell, tuple[tuple[Cell, tuple[int, ...]], ...]], ...] = ()
    can_place_worker: bool = False
    can_pass: bool = False
    can_undo: bool = False

    def body(self) -> dict[str, object]:
        return {
            "boardUpdate": _map([(c.to_json(), s.to_json()) for c, s in self.board]),
            "reachableCells": _map(
                [(w.to_json(), [c.to_json() for c in cells]) for w, cells in self.reachable]
            ),
            "buildableCells": _map(
                [
                    (w.to_json(), _map([(c.to_json(), list(lv)) for c, lv in options]))
                    for w, options in self.buildable
                ]
            ),
            "canPlaceWorker": self.can_place_worker,
            "canPass": self.can_pass,
            "canUndo": self.can_undo,
            "player": self.player,
        }

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Update:
        board = tuple(
            (Cell.from_json(k), CellState.from_json(v)) for k, v in _pairs(body, "boardUpdate")
        )
        reachable = tuple(
            (Cell.from_json(k), tuple(Cell.from_json(c) for c in _list(v, "reachable cells")))
            for k, v in _pairs(body, "reachableCells")
        )
        buildable = tuple(
            (
                Cell.from_json(k),
                tuple(
                    (
                        Cell.from_json(c),
                        tuple(_int_item(x, "levels") for x in _list(lv, "levels")),
                    )
                    for c, lv in _pairs_of(v, "buildable cells")
                ),
            )
            for k, v in _pairs(body, "buildableCells", "buildablecells")
        )
        return cls(
            _str(body, "player"),
            board,
            reachable,
            buildable,
            _bool(body, "canPlaceWorker"),
            _bool(body, "canPass"),
            _bool(body, "canUndo"),
        )


@dataclass(frozen=True, slots=True)
class Info(Message):
    """§4.1.2: a code for ``player`` (the recipient) to show."""

    TYPE: ClassVar[MessageType] = MessageType.INFO
    player: str
    information: str

    def body(self) -> dict[str, object]:
        return {"information": self.information, "player": self.player}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Info:
        return cls(_str(body, "player"), _str(body, "information"))


@dataclass(frozen=True, slots=True)
class EndGame(Message):
    """§4.1.3: the game is over. ``player`` won (``is_winner``), or (``is_winner`` false or
    absent) ``player`` disconnected or lost and the game ended for that reason."""

    TYPE: ClassVar[MessageType] = MessageType.ENDGAME
    player: str
    is_winner: bool | None

    def body(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.is_winner is not None:
            out["isWinner"] = self.is_winner
        out["player"] = self.player
        return out

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> EndGame:
        winner = body.get("isWinner")
        return cls(_str(body, "player"), winner if isinstance(winner, bool) else None)


# --- client → server -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Register(Message):
    """§2.2/§2.3: (A) with ``n_players`` and ``gods`` starts a game; (B) joins one."""

    TYPE: ClassVar[MessageType] = MessageType.REGISTER
    nickname: str
    n_players: int | None = None
    gods: bool | None = None

    def body(self) -> dict[str, object]:
        out: dict[str, object] = {"nickname": self.nickname}
        if self.n_players is not None:
            out["nPlayers"] = self.n_players
        if self.gods is not None:
            out["gods"] = self.gods
        return out

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Register:
        n_players = _int(body, "nPlayers", "REGISTER") if "nPlayers" in body else None
        gods = _bool(body, "gods") if "gods" in body else None
        return cls(_str(body, "nickname"), n_players, gods)


@dataclass(frozen=True, slots=True)
class GodInit(Message):
    """§3.1.2: ``player`` takes ``god_name``."""

    TYPE: ClassVar[MessageType] = MessageType.GODINIT
    player: str
    god_name: str

    def body(self) -> dict[str, object]:
        return {"player": self.player, "godName": self.god_name}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> GodInit:
        return cls(_opt_str(body, "player") or "", _str(body, "godName"))


@dataclass(frozen=True, slots=True)
class ChooseStarter(Message):
    """§3.2.2: the challenger names the starting player (ERRATA: type ``CHOSESTARTER``)."""

    TYPE: ClassVar[MessageType] = MessageType.CHOSESTARTER
    player: str
    starter: str

    def body(self) -> dict[str, object]:
        return {"player": self.player, "starter": self.starter}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> ChooseStarter:
        return cls(_opt_str(body, "player") or "", _str(body, "starter"))


@dataclass(frozen=True, slots=True)
class WorkerInit(Message):
    """§4.2.1: put a worker of ``sex`` (``M``/``F``) on ``cell``."""

    TYPE: ClassVar[MessageType] = MessageType.WORKERINIT
    player: str
    cell: Cell
    sex: str

    def body(self) -> dict[str, object]:
        return {"player": self.player, "coordinates": self.cell.to_json(), "sex": self.sex}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> WorkerInit:
        sex = _str(body, "sex").upper()
        if sex not in ("M", "F"):
            raise MessageError("sex is M or F")
        return cls(
            _opt_str(body, "player") or "",
            Cell.from_json(body.get("coordinates"), "coordinates"),
            sex,
        )


@dataclass(frozen=True, slots=True)
class Move(Message):
    """§4.2.2: move the worker on ``source`` to ``destination``."""

    TYPE: ClassVar[MessageType] = MessageType.MOVE
    player: str
    source: Cell
    destination: Cell

    def body(self) -> dict[str, object]:
        return {
            "source": self.source.to_json(),
            "destination": self.destination.to_json(),
            "player": self.player,
        }

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Move:
        return cls(
            _opt_str(body, "player") or "",
            Cell.from_json(body.get("source"), "source"),
            Cell.from_json(body.get("destination"), "destination"),
        )


@dataclass(frozen=True, slots=True)
class Build(Message):
    """§4.2.3: the worker on ``source`` builds ``level`` (4 = a dome) on ``destination``."""

    TYPE: ClassVar[MessageType] = MessageType.BUILD
    player: str
    source: Cell
    destination: Cell
    level: int

    def body(self) -> dict[str, object]:
        return {
            "source": self.source.to_json(),
            "destination": self.destination.to_json(),
            "level": self.level,
            "player": self.player,
        }

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Build:
        return cls(
            _opt_str(body, "player") or "",
            Cell.from_json(body.get("source"), "source"),
            Cell.from_json(body.get("destination"), "destination"),
            _int(body, "level", "BUILD"),
        )


@dataclass(frozen=True, slots=True)
class Undo(Message):
    """§4.2.4: take back the last action, or (``all``) the whole turn so far.

    ERRATA: the field is ``all`` (the spec's ``isAll`` is accepted too).
    """

    TYPE: ClassVar[MessageType] = MessageType.UNDO
    player: str
    all: bool = False

    def body(self) -> dict[str, object]:
        return {"all": self.all, "player": self.player}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Undo:
        key = "all" if "all" in body else "isAll"
        every = _bool(body, key) if key in body else False
        return cls(_opt_str(body, "player") or "", every)


@dataclass(frozen=True, slots=True)
class Pass(Message):
    """§4.2.5: end the turn."""

    TYPE: ClassVar[MessageType] = MessageType.PASS
    player: str

    def body(self) -> dict[str, object]:
        return {"player": self.player}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Pass:
        return cls(_opt_str(body, "player") or "")


@dataclass(frozen=True, slots=True)
class Lose(Message):
    """§4.2.6: the player gives up (it cannot move)."""

    TYPE: ClassVar[MessageType] = MessageType.LOSE
    player: str

    def body(self) -> dict[str, object]:
        return {"player": self.player}

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Lose:
        return cls(_opt_str(body, "player") or "")


ServerMessage = ServerState | GodList | Players | Update | Info | EndGame | Ping
ClientMessage = (
    Register | GodInit | ChooseStarter | WorkerInit | Move | Build | Undo | Pass | Lose | Ping
)

_CLASSES: dict[MessageType, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        Ping,
        ServerState,
        GodList,
        Players,
        Update,
        Info,
        EndGame,
        Register,
        GodInit,
        ChooseStarter,
        WorkerInit,
        Move,
        Build,
        Undo,
        Pass,
        Lose,
    )
}

SERVER_TYPES = frozenset(
    {
        MessageType.SERVERSTATE,
        MessageType.GODLISTMESSAGE,
        MessageType.PLAYERSMESSAGE,
        MessageType.UPDATE,
        MessageType.INFO,
        MessageType.ENDGAME,
        MessageType.PING,
    }
)
CLIENT_TYPES = frozenset(set(MessageType) - SERVER_TYPES | {MessageType.PING})


def decode(text: str) -> Message:
    """The message in an envelope's JSON text; raise MessageError if it cannot be read."""
    envelope = _loads(text)
    if not isinstance(envelope, dict):
        raise MessageError("an envelope is a JSON object")
    kind = envelope.get("type")
    if not isinstance(kind, str):
        raise MessageError("the envelope has no type")
    message_type = MessageType.from_wire(kind)
    raw = envelope.get("message", {})
    body = _loads(raw) if isinstance(raw, str) else raw
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise MessageError(f"{message_type.value}: the message is not a JSON object")
    try:
        return _CLASSES[message_type].from_body(body)
    except MessageError as exc:
        raise MessageError(f"{message_type.value}: {exc}") from None


# --- helpers ---------------------------------------------------------------------------


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise MessageError(f"not JSON: {str(exc)[:80]}") from None


def _map(pairs: Sequence[tuple[object, object]]) -> object:
    """A map with complex keys as Gson writes it: ``[[k, v], ...]``, or ``{}`` when empty."""
    return [[k, v] for k, v in pairs] if pairs else {}


def _pairs(body: Mapping[str, Any], *keys: str) -> list[tuple[object, object]]:
    for key in keys:
        if key in body:
            return _pairs_of(body[key], key)
    raise MessageError(f"{keys[0]} is missing")


def _pairs_of(value: object, what: str) -> list[tuple[object, object]]:
    if isinstance(value, dict):
        if value:
            raise MessageError(f"{what}: a map with cell keys is a list of pairs")
        return []
    pairs = []
    for item in _list(value, what):
        if not isinstance(item, list) or len(item) != 2:
            raise MessageError(f"{what}: each entry is [key, value]")
        pairs.append((item[0], item[1]))
    return pairs


def _object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MessageError(f"{what} is not an object")
    return value


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise MessageError(f"{what} is not a list")
    return value


def _str(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise MessageError(f"{key} is not a string")
    return value


def _opt_str(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise MessageError(f"{key} is not a string")
    return value


def _bool(body: Mapping[str, Any], key: str) -> bool:
    value = body.get(key)
    if not isinstance(value, bool):
        raise MessageError(f"{key} is not true or false")
    return value


def _int(body: Mapping[str, Any], key: str, what: str) -> int:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageError(f"{what}: {key} is not an integer")
    return value


def _int_item(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageError(f"{what}: not an integer")
    return value
