"""The ports: what the dialects, the web seats and the pages use of the lobby, a room,
the names, the feed and the records, as typed interfaces (issue 32.1).

Each port is drawn from what its users call today, and has two implementations that
type-check against it (mypy --strict; each implementation's module holds a
``_conforms`` function that mypy checks and nothing calls):

============  ===========================================  ==================================
port          ``meeple serve`` (in process)                a cluster edge (over the bus)
============  ===========================================  ==================================
LobbyPort     :class:`meeple.server.lobby.tables.Lobby`    :class:`meeple.node.edge.EdgeLobby`
RoomPort      :class:`meeple.server.rooms.room.Room`       :class:`meeple.node.edge.RemoteRoom`
SeatPort      every dialect's seat                         the same, and a rooms node's
                                                           :class:`meeple.node.rooms.RemoteSeat`
NamesPort     :class:`meeple.server.lobby.names.           :class:`meeple.node.names.ClusterNames`
              NameRegistry`
FeedPort      :class:`meeple.server.feed.Feed`             the same, fed by
                                                           :class:`meeple.node.views.ViewRelay`
RecordsPort   :class:`meeple.web.records.LocalRecords`     :class:`meeple.node.store.BusRecords`
============  ===========================================  ==================================

A dialect holds a :class:`LobbyPort` (``Services.lobby``, :func:`lobby_port`) and the
:class:`RoomPort` it is seated in, never the classes behind them, so the same dialect
serves on either transport. What only ``meeple serve`` has (the journal, the bots, the
contests) asks for the in-process :class:`~meeple.server.lobby.tables.Lobby` itself
(:func:`meeple.server.lobby.tables.server_lobby`), which a cluster edge refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, Unpack

if TYPE_CHECKING:
    from meeple.server.feed import FeedItem, Subscription
    from meeple.server.lobby.tables import (
        QueueKey,
        RoomFactory,
        RoomRestorer,
        StartRule,
        TableInfo,
    )
    from meeple.server.store.database import (
        GameRecord,
        PlayerProfile,
        PlayerRating,
        RatingPoint,
    )

__all__ = [
    "FeedPort",
    "GameSearch",
    "LobbyPort",
    "NamesPort",
    "RecordsPort",
    "RoomPort",
    "SeatPort",
    "TablePort",
]


class SeatPort(Protocol):
    """A player at a table: the room and the lobby tell it events, which it renders in
    its protocol (it must not block)."""

    name: str

    def deliver(self, event: object) -> None: ...


class RoomPort(Protocol):
    """The room a seat plays in, as its dialect uses it."""

    @property
    def uid(self) -> str:
        """The game's uid (its URL, its log)."""
        ...

    @property
    def finished(self) -> bool: ...

    @property
    def game_name(self) -> str:
        """The game's name (scrabble, santorini, spectrangle, cmpn402)."""
        ...

    @property
    def game(self) -> object:
        """The game as the seat may read it (do not change it): the room's engine game in
        ``meeple serve``, the seat's view from its last delivery on a cluster edge."""
        ...

    def seat_index(self, seat: SeatPort) -> int | None:
        """``seat``'s index in the room (None: not one of its seats)."""

    def submit(self, seat: SeatPort | None, command: object) -> None:
        """A seat's command to the room's inbox (applied in order, once)."""

    def leave(self, seat: SeatPort) -> None:
        """The seat's connection is gone: the room's leave rule applies."""


class TablePort(Protocol):
    """A table a seat sits at before its game starts."""

    @property
    def id(self) -> str: ...


class LobbyPort(Protocol):
    """The lobby, as the dialects, the web seats and the games' registration use it."""

    def has_game(self, game: str) -> bool: ...

    def register_game(
        self,
        game: str,
        factory: RoomFactory,
        *,
        variants: Mapping[str, tuple[int, int]] | None = None,
        restore: RoomRestorer | None = None,
    ) -> None: ...

    def name_rule(
        self, game: str, variant: str, protocol: str, fits: Callable[[str], bool], rule: str
    ) -> None:
        """Every seat at a ``game``/``variant`` table of another protocol than
        ``protocol`` must have a name ``fits`` accepts."""

    def join(self, key: QueueKey, seat: SeatPort, *, rule: StartRule = ...) -> object:
        """Sit ``seat`` at a table of kind ``key`` (one is opened if none has room)."""

    def create_table(
        self,
        game: str,
        variant: str,
        size: int,
        start_rule: StartRule = ...,
        settings: Mapping[str, str] | None = None,
        *,
        opener: SeatPort | None = None,
    ) -> TablePort: ...

    def sit(self, table_id: str, seat: SeatPort) -> object: ...

    def ready(self, seat: SeatPort) -> object: ...

    def add_bot(self, table_id: str, level: str, *, by: SeatPort) -> object:
        """Seat a server bot at the open table ``table_id`` (the web's "add a bot",
        asked by ``by``); it plays where the table's room runs (a rooms node on a
        cluster). Refusals: the lobby's TableError kinds, ValueError for a level."""

    def is_ready(self, seat: SeatPort) -> bool: ...

    def renamed(self, seat: SeatPort, old: str) -> None: ...

    def leave(self, seat: SeatPort) -> object:
        """Stand up from the table (before its game starts)."""

    def disconnect(self, seat: SeatPort) -> None:
        """The seat's connection is gone (a rejoinable seat is held for its token)."""

    def quit(self, seat: SeatPort) -> None:
        """The player leaves for good (nothing is held)."""

    def rejoin(self, token: str, seat: SeatPort) -> object:
        """Take back the seat ``token`` holds (its room, or its table)."""

    def room_of(self, seat: SeatPort) -> RoomPort | None: ...

    def table_of(self, seat: SeatPort) -> TablePort | None: ...

    def tables(self, game: str | None = None) -> Sequence[TableInfo]:
        """The open tables (of ``game``, or all), oldest first."""
        ...

    def waiting(self, key: QueueKey) -> Sequence[object]:
        """Who waits at the table of kind ``key`` that a new seat would join."""
        ...


class NamesPort(Protocol):
    """The names in use: one connection per name (across every edge on a cluster)."""

    def claim(self, name: str, owner: object) -> bool: ...

    def claim_then(self, name: str, owner: object, then: Callable[[bool], None]) -> None: ...

    def release(self, name: str, owner: object) -> None: ...

    def holder(self, name: str) -> object | None: ...

    def __contains__(self, name: object) -> bool: ...


class FeedPort(Protocol):
    """The spectators' feed: topics (the lobby, each game), their latest snapshot, and
    the subscriptions of the pages' sockets."""

    def subscribe(self, *topics: str, limit: int | None = None) -> Subscription: ...

    def subscribers(self, topic: str) -> int: ...

    def last(self, topic: str) -> FeedItem | None: ...

    def publish(self, topic: str, build: Callable[[], dict[str, Any]]) -> FeedItem | None: ...

    def forget(self, topic: str) -> None: ...


class GameSearch(TypedDict):
    """What a search of finished games asks (:meth:`RecordsPort.search_games`, as
    :meth:`~meeple.server.store.database.Store.search_games` reads it): of ``game``, with
    ``player``, numbered below ``before`` (the next page's cursor), at most ``limit``;
    ``result`` one of :data:`~meeple.server.store.database.OUTCOMES`; ended in
    [``ended_from``, ``ended_to``) (Unix times). None: any."""

    game: str | None
    player: str | None
    before: int | None
    limit: int
    result: NotRequired[str | None]
    ended_from: NotRequired[int | None]
    ended_to: NotRequired[int | None]


class RecordsPort(Protocol):
    """The store's reads the pages make (each as
    :class:`~meeple.server.store.database.Store`'s method of that name): finished games
    and ratings only."""

    async def game_by_uid(self, uid: str) -> GameRecord | None: ...

    async def game(self, game_id: int) -> GameRecord | None: ...

    async def games(self, *, limit: int) -> list[GameRecord]: ...

    async def search_games(self, **search: Unpack[GameSearch]) -> list[GameRecord]:
        """Finished games, newest first, that match ``search`` (a page of them)."""

    async def analysis(self, uid: str, version: int) -> dict[str, Any] | None:
        """The analysis kept with the game ``uid`` at analysis ``version``, if any."""

    async def keep_analysis(self, uid: str, version: int, analysis: dict[str, Any]) -> None:
        """Keep the analysis of the game ``uid`` beside its record (or do nothing where
        the pages cannot write)."""

    async def leaderboard(self, game: str, *, limit: int) -> list[PlayerRating]: ...

    async def player(self, name: str, *, limit: int) -> PlayerProfile: ...

    async def rating_history(self, game: str, name: str) -> list[RatingPoint]: ...
