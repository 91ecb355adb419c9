"""The one schema of what crosses between a cluster's nodes, and its version (issue 32.4).

Two kinds of payload cross, both listed in docs/cluster.md ("What crosses the bus") and
both under one version number, :data:`SCHEMA`:

- **Control messages and stored values** — this module: a node's heartbeat, a chat line,
  a names request and its answer, a rejoin lookup, an owner's short answers (:class:`Ack`:
  ``ok``, ``busy``, ``taken``, ``done``, ``over``), a spectator view frame, an admin
  answer, and what sits in KV buckets and the room log stream (a lease, the lobby's
  state, a name, a rejoin token's seat, a log's owner claim and its end). Each is a
  :class:`Message`: a frozen ``msgspec`` struct, JSON on the wire, tagged (``"t"``: its
  kind, so a payload of another kind on the same subject is refused) and versioned
  (``"v"``: :data:`SCHEMA` when written). JSON because operators read buckets with
  ``nats kv get``, and because a reader ignores a field it does not know, so a later
  schema may add fields with defaults.
- **Room values** — a seat's command and the events and views a room delivers, which
  carry the engines' values: :func:`meeple.node.wire.dumps` (MessagePack through an
  explicit :class:`~meeple.bus.codec.Registry`), whose every message starts with the
  same :data:`SCHEMA` number.

**The version rule.** A message between nodes (a request, its answer, a publish) is
read only at this node's :data:`SCHEMA`; any other version — an older node's, whose
messages carry no ``v`` at all (schema 1: bare ``ok``/``busy`` flags and untyped JSON
dicts), or a newer one's — is refused with a :class:`~meeple.bus.codec.WireError` of
kind ``version``, which the bus logs once per subject (:func:`~meeple.bus.codec.refused`)
and answers as an error: the node goes on, it does not crash. A **stored** value
(:attr:`Message.KEPT`: KV buckets, the log stream) is read at any version up to
:data:`SCHEMA` — a value written by schema 1 has the same fields and no ``v``, and reads
as it is — so the state a cluster keeps survives an upgrade; a value of a newer schema
is refused as above.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeVar

import msgspec

from meeple.bus.codec import Limits, WireError

__all__ = [
    "BUSY",
    "CODEC",
    "DONE",
    "KINDS",
    "OK",
    "OVER",
    "SCHEMA",
    "TAKEN",
    "Ack",
    "AdminAnswer",
    "Beat",
    "BeatRoom",
    "ChatLine",
    "LeaseValue",
    "LobbyStateValue",
    "LogEnd",
    "LogOwner",
    "Message",
    "NameValue",
    "NamesLost",
    "NamesRequest",
    "Rebound",
    "RejoinAsk",
    "SchemaCodec",
    "SeatAt",
    "TokenValue",
    "ViewFrame",
    "WatchChatLine",
    "decode",
    "encode",
    "version_of",
]

#: The version of everything that crosses between nodes (module doc). 1: before it was
#: versioned (bare flags, untyped JSON, unversioned MessagePack); 2: this schema.
SCHEMA = 2

#: How much one message may hold: NATS's default payload limit (1 MiB).
LIMITS = Limits()

_M = TypeVar("_M", bound="Message")


class Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="t"):
    """One message of the schema: its kind (``t``, the class's tag) and its version
    (``v``, :data:`SCHEMA` when written here)."""

    #: A value kept in a KV bucket or the log stream: read at any version up to
    #: :data:`SCHEMA` (module doc); a message between nodes is read at :data:`SCHEMA` only.
    KEPT: ClassVar[bool] = False

    v: int = SCHEMA


class _Head(msgspec.Struct):
    """What :func:`decode` reads first: the payload's kind (``t``) and version (None:
    schema 1's)."""

    t: str | None = None
    v: int | None = None


def encode(message: Message) -> bytes:
    """``message`` as the bytes that cross (JSON, its tag and version included)."""
    return msgspec.json.encode(message, order="deterministic")


def version_of(data: bytes) -> int:
    """The schema version of a JSON payload (1 for one without ``v``: schema 1's);
    :class:`WireError` for bytes that are not a JSON object within :data:`LIMITS`."""
    head = _head(data)
    return 1 if head.v is None else head.v


def _head(data: bytes) -> _Head:
    if len(data) > LIMITS.max_bytes:
        raise WireError("size", f"{len(data)} bytes, more than {LIMITS.max_bytes}")
    try:
        head = msgspec.json.decode(data, type=_Head)
    except msgspec.ValidationError as e:
        raise WireError("format", str(e)[:200]) from None
    except (msgspec.DecodeError, RecursionError, ValueError, TypeError) as e:
        raise WireError("format", str(e)[:200]) from None
    return head


def decode(data: bytes, kind: type[_M]) -> _M:
    """The ``kind`` message ``data`` holds, by the version rule (module doc); a
    :class:`WireError` for anything else: too big, not JSON, another kind (``t``), a
    field of the wrong type, or a version this node does not read (kind ``version``)."""
    head = _head(data)
    version = 1 if head.v is None else head.v
    if version != SCHEMA and not (kind.KEPT and 1 <= version < SCHEMA):
        raise WireError(
            "version",
            f"a {kind.__name__} of schema {version}; this node reads schema {SCHEMA}",
        )
    # msgspec takes a payload without a tag as the one tagged kind it is asked for; from
    # schema 2 on every message is written with its ``t``, so one without is refused.
    tag = kind.__struct_config__.tag
    if version >= 2 and head.t != tag:
        raise WireError("tag", f"a payload of kind {head.t!r}, not {tag!r}")
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.ValidationError as e:
        raise WireError("type", str(e)[:200]) from None
    except (msgspec.DecodeError, RecursionError, ValueError, TypeError) as e:
        raise WireError("format", str(e)[:200]) from None


class SchemaCodec:
    """This schema as a bus :class:`~meeple.bus.base.Codec`: a control message sealed
    with it (``Sealed(message, CODEC)``) crosses one process by reference to a receiver
    reading with the same codec (:meth:`~meeple.bus.base.Bus.listen`,
    :meth:`~meeple.bus.base.Bus.answer`, :meth:`~meeple.bus.base.Bus.ask`), and NATS as
    :func:`encode`'s bytes, exactly; bytes are read by :func:`decode` (the version rule),
    at most ``max_bytes`` of them. ``expect``: a :class:`Message` kind (``object``: any
    kind of this schema)."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = LIMITS.max_bytes if max_bytes is None else max_bytes

    def encode(self, value: Any) -> bytes:
        if not isinstance(value, Message):
            raise TypeError(f"not a message of the schema: {type(value).__name__}")
        return encode(value)

    def decode(self, data: bytes, expect: Any = object) -> Any:
        if len(data) > self.max_bytes:
            raise WireError("size", f"{len(data)} bytes, more than {self.max_bytes}")
        if expect is object:
            kind = KINDS.get(_kind_of(data))
            if kind is None:
                raise WireError("type", "not a message of the schema")
            return decode(data, kind)
        return decode(data, expect)

    def fits(self, value: object, expect: Any) -> bool:
        return isinstance(value, Message if expect is object else expect)


class _Kind(msgspec.Struct):
    t: str = ""


def _kind_of(data: bytes) -> str:
    try:
        return msgspec.json.decode(data, type=_Kind).t
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError) as e:
        raise WireError("format", str(e)[:200]) from None


# --- answers ------------------------------------------------------------------------------


class Ack(Message, frozen=True, tag="ack"):
    """An owner's short answer: ``ok`` (done), ``busy`` (not now: ask again,
    :func:`meeple.node.ask.ask`), ``taken`` (a name another holder has), ``done``
    (applied before: a retry), ``over`` (the room's game is over)."""

    say: Literal["ok", "busy", "taken", "done", "over"]


#: The answers' bytes, compared as they are (the encoding is deterministic).
OK = encode(Ack(say="ok"))
BUSY = encode(Ack(say="busy"))
TAKEN = encode(Ack(say="taken"))
DONE = encode(Ack(say="done"))
OVER = encode(Ack(say="over"))


# --- nodes --------------------------------------------------------------------------------


class BeatRoom(msgspec.Struct, frozen=True):
    """A room in a node's heartbeat: what an edge's lobby page and the API list."""

    uid: str
    game: str
    players: list[str] = []
    protocols: list[str] = []


class Beat(Message, frozen=True, tag="beat"):
    """A node's heartbeat on ``<ns>.node.<name>`` (:meth:`meeple.node.node.Node.info`)."""

    name: str
    roles: list[str] = []
    pid: int = 0
    address: list[str] = []
    listeners: dict[str, str] = {}
    lobby_leader: bool = False
    rooms: list[BeatRoom] = []
    at: float = 0.0


class ChatLine(Message, frozen=True, tag="chat"):
    """One lobby chat line between edges (:mod:`meeple.node.chat`); ``origin``: the
    edge process that sent it (it does not hear its own again)."""

    origin: str
    sender: str
    text: str


class WatchChatLine(Message, frozen=True, tag="watchchat"):
    """One line of a game's spectators' chat between edges (issue 34.5:
    :class:`meeple.node.chat.WatchChatRelay`): the edge process it came from, the game,
    the sender's name and the text, as a browser sent them (checked again on arrival)."""

    origin: str
    uid: str
    sender: str
    text: str


# --- names and rejoin -----------------------------------------------------------------------


class NamesRequest(Message, frozen=True, tag="names"):
    """An edge's names request (:mod:`meeple.node.names`): ``claim`` one name for a
    holder (answered ``ok`` or ``taken``), ``renew`` or ``release`` many (``claims``:
    name, holder; answered :class:`NamesLost`). ``ttl``: seconds, None for the
    bucket's own."""

    op: Literal["claim", "renew", "release"]
    name: str = ""
    holder: str = ""
    ttl: float | None = None
    claims: list[tuple[str, str]] = []


class NamesLost(Message, frozen=True, tag="names-lost"):
    """The names a renewal found another holder had taken meanwhile (it came late)."""

    names: list[str] = []


class RejoinAsk(Message, frozen=True, tag="rejoin"):
    """An edge asks the lobby nodes where a rejoin token's seat is, by the token's
    SHA-256 (never the token: :mod:`meeple.node.rejoin`)."""

    hash: str


class SeatAt(Message, frozen=True, tag="seat-at"):
    """Where a rejoin token's seat is: its room and seat number; ``room`` None when no
    seat is held for the token."""

    room: str | None = None
    seat: int = 0


class Rebound(Message, frozen=True, tag="rebound"):
    """A room owner's answer to a :class:`~meeple.node.wire.Rebind`: the seat's name and
    the number the new edge's commands for it go on from."""

    name: str
    next: int


# --- rooms ----------------------------------------------------------------------------------


class ViewFrame(Message, frozen=True, tag="view"):
    """A room's spectator view as its owner publishes it (:mod:`meeple.node.views`):
    ``at`` orders frames (actions logged, the owner's lease epoch, the feed's number);
    ``data`` the spectator view's JSON as the web pages read it (its own format,
    docs/protocols/web.md), carried as it is."""

    at: tuple[int, int, int]
    data: msgspec.Raw


class AdminAnswer(Message, frozen=True, tag="admin"):
    """A room owner's answer to an organiser's :class:`~meeple.node.wire.Admin`
    (:meth:`meeple.node.rooms.RoomsRole._admin`): the owner and its lease epoch; the
    room's admin view; an action's result; or why not (``refused``: the room's own
    refusal, or the token is not the owner's)."""

    owner: str
    epoch: int
    view: dict[str, Any] | None = None
    result: Any = None
    error: str | None = None
    refused: bool = False


# --- stored values (KV buckets, the log stream) ------------------------------------------------


class LeaseValue(Message, frozen=True, tag="lease"):
    """A lease in the leases bucket (:mod:`meeple.cluster.lease`): its holder and its
    epoch (None: the key's revision when first taken is the epoch)."""

    KEPT: ClassVar[bool] = True

    owner: str = ""
    epoch: int | None = None


class LobbyStateValue(Message, frozen=True, tag="lobby-state"):
    """The lobby's state as its leader wrote it (:mod:`meeple.cluster.lobbystate`): its
    writer, the lease epoch it wrote under, and the lobby's own state (the leader's
    tables, :meth:`meeple.node.lobby.LobbyLeader` 's snapshot)."""

    KEPT: ClassVar[bool] = True

    owner: str = ""
    epoch: int = -1
    state: dict[str, Any] = {}


class NameValue(Message, frozen=True, tag="name"):
    """A name in use, in the names bucket (:class:`meeple.cluster.registry.Names`)."""

    KEPT: ClassVar[bool] = True

    name: str
    holder: str


class TokenValue(Message, frozen=True, tag="token"):
    """A rejoin token's seat, in the tokens bucket
    (:class:`meeple.cluster.registry.RejoinSeat`)."""

    KEPT: ClassVar[bool] = True

    room: str
    seat: int
    route: str | None = None
    held: bool = False


class LogOwner(Message, frozen=True, tag="log-owner"):
    """An owner's claim in a room's log (:meth:`meeple.cluster.log.JetStreamLog.claim`):
    the node and its lease epoch."""

    KEPT: ClassVar[bool] = True

    epoch: int
    owner: str = ""


class LogEnd(Message, frozen=True, tag="log-end"):
    """A room log's end: the finished game to store once, and why it ended."""

    KEPT: ClassVar[bool] = True

    game: dict[str, Any] = {}
    end_reason: str | None = None


#: Every message of this module by its tag (docs/cluster.md's table is made from it).
KINDS: dict[str, type[Message]] = {
    str(kind.__struct_config__.tag): kind
    for kind in (
        Ack,
        Beat,
        ChatLine,
        WatchChatLine,
        NamesRequest,
        NamesLost,
        RejoinAsk,
        SeatAt,
        Rebound,
        ViewFrame,
        AdminAnswer,
        LeaseValue,
        LobbyStateValue,
        NameValue,
        TokenValue,
        LogOwner,
        LogEnd,
    )
}

#: The schema's codec for the bus (:class:`SchemaCodec`, NATS's payload limit).
CODEC = SchemaCodec()
