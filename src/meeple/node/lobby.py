"""The ``lobby`` role: one leader on the ``lobby`` lease, standbys ready to take over.

The leader runs ``meeple serve``'s own :class:`~meeple.server.lobby.Lobby` (tables,
matching, the variant and name rules where they are decided today), with two stand-ins:

- each edge seat is a :class:`ProxySeat` (its route, name, protocol, variants): what the
  lobby tells it is published on ``<ns>.seat.<route>.lobby``;
- a table that starts becomes a :class:`RoomTicket`: the lobby's bookkeeping of a room
  whose actor runs on a rooms node, opened by a request to any of them
  (``<ns>.rooms.open``, queue group ``rooms``); the rooms node tells the leader when the
  room is over (``<ns>.lobby.req.roomdone``) and the lobby frees its seats.

Edges' calls arrive on ``<ns>.lobby.req.<op>`` (queue group ``lobby``), served by the
leader only. A standby tries for the lease every third of its TTL and serves once it
holds it. The tables of a leader that dies are not carried to the new one yet (its
running games go on: they are the rooms nodes'); their players ask again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from meeple.bus.base import Bus, BusError, BusTimeout, NoResponder, RemoteError, Subscription
from meeple.bus.subjects import Namespace
from meeple.cluster.lease import Lease, Leases, lobby_key
from meeple.node import wire
from meeple.node.edge import LobbyCall
from meeple.node.rooms import EDGE_SILENCE, OpenRoom
from meeple.server.lobby import Dismissed, Lobby, QueueKey, RoomFactory, StartRule, TableEvent
from meeple.server.room import Seat

__all__ = ["LobbyRole", "ProxySeat", "RoomTicket"]

logger = logging.getLogger(__name__)

FULL = StartRule.FULL
# Seconds the leader keeps asking for a rooms node to open a room.
OPEN_PATIENCE = 10.0
# The lobby calls an edge may make, and nothing else (a LobbyCall names a method).
CALLS = frozenset({"join", "leave", "disconnect", "quit", "ready", "renamed", "sit"})


class ProxySeat:
    """An edge's seat at the leader's lobby; see the module doc."""

    rejoinable = False

    def __init__(self, role: LobbyRole, info: Mapping[str, Any]) -> None:
        self._role = role
        self.route = str(info["route"])
        self.update(info)

    def update(self, info: Mapping[str, Any]) -> None:
        self.name = str(info["name"])
        self.protocol = str(info.get("protocol", "unknown"))
        variants = info.get("variants")
        self.variants: Collection[tuple[str, str]] | None = (
            None if variants is None else frozenset(tuple(v) for v in variants)
        )
        self.bot = bool(info.get("bot"))
        self.level = info.get("level")
        self.info = dict(info)

    def deliver(self, event: object) -> None:
        self._role.send(self._role.ns.seat(self.route, "lobby"), wire.dumps(event))


class _TicketLog(logging.LoggerAdapter[logging.Logger]):
    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"[{self.extra['room'] if self.extra else '?'}] {msg}", kwargs


class RoomTicket:
    """A room as the leader's lobby keeps it: its seats and uid; the room itself runs on
    a rooms node."""

    game_name = "room"

    def __init__(self, role: LobbyRole, key: QueueKey, seats: list[Seat]) -> None:
        self._role = role
        self.key = key
        self.game_name = key.game
        self.seats = list(seats)
        self.uid = secrets.token_hex(6)
        self.id = f"room-{self.uid}"
        self.feed: Any = None
        self.journal: Any = None
        self.rejoin_hashes: list[str | None] = [None] * len(seats)
        self.on_changed: list[Callable[[Any], None]] = []
        self.on_finished: list[Callable[[Any], None]] = []
        self.finished = False
        self.unwritten = False
        self.owner: str | None = None
        self.log = _TicketLog(logger, {"room": self.id})

    def start(self) -> None:
        self._role.spawn(self._open(), f"open {self.uid}")

    async def _open(self) -> None:
        request = OpenRoom(
            self.uid,
            self.key,
            tuple(getattr(s, "info", {"route": "", "name": s.name}) for s in self.seats),
            tuple(self.rejoin_hashes),
        )
        loop = asyncio.get_running_loop()
        until = loop.time() + OPEN_PATIENCE
        while True:
            try:
                await self._role.bus.request(
                    self._role.ns.rooms_open, wire.dumps(request), timeout=5.0
                )
                return
            except (NoResponder, BusTimeout, RemoteError) as e:
                # No rooms node yet, or the one asked died (or failed) opening it: ask
                # again, saying so (the room may be open already: RoomsRole._open).
                if loop.time() > until:
                    logger.error("room %s: no rooms node opened it: %r", self.uid, e)
                    break
                request = dataclasses.replace(request, attempt=request.attempt + 1)
                await asyncio.sleep(0.1)
            except BusError as e:
                logger.error("room %s: no rooms node opened it: %r", self.uid, e)
                break
        logger.error("room %s: no rooms node answers; the table's players are freed", self.uid)
        self.ended()

    def ended(self) -> None:
        if self.finished:
            return
        self.finished = True
        for callback in self.on_finished:
            try:
                callback(self)
            except Exception:
                logger.exception("on_finished callback failed")

    # The room's own inbox is on its rooms node: the edges send there.
    def leave(self, seat: Seat) -> None:
        """The edge that held the seat tells the room itself (module doc)."""

    def rebind(self, old: Seat, new: Seat) -> None:
        """Rejoin through another edge is not carried yet."""

    def halt(self, reason: str) -> None:
        """The rooms node's log is JetStream, not the leader's journal."""

    def spectator_view(self) -> dict[str, Any] | None:
        return None


class LobbyRole:
    """The lobby role of one node: standby until it holds the lease, then the leader."""

    def __init__(
        self,
        name: str,
        bus: Bus,
        ns: Namespace,
        leases: Leases,
        lobby: Lobby,
        games: Mapping[str, Mapping[str, tuple[int, int]] | None],
    ) -> None:
        self.name = name
        self.bus = bus
        self.ns = ns
        self.leases = leases
        self.lobby = lobby
        for game, variants in games.items():
            lobby.register_game(game, self._factory(), variants=variants)
        lobby.on_change.append(self._table_changed)
        self.lease: Lease | None = None
        self.leader = asyncio.Event()
        self._seats: dict[str, ProxySeat] = {}
        self._subs: list[Subscription] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keeper: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()
        self._heard: dict[str, float] = {}  # node -> its last heartbeat
        self._beats: Subscription | None = None

    def _factory(self) -> RoomFactory:
        def create(key: QueueKey, seats: list[Seat]) -> Any:
            return RoomTicket(self, key, seats)

        return create

    def _table_changed(self, event: TableEvent) -> None:
        """Tell every edge of a table opened, changed, started or closed (their copy of
        the open tables: :meth:`meeple.node.edge.EdgeLobby.waiting`)."""
        if self.leader.is_set():
            self.send(self.ns.lobby_events, wire.dumps(event))

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def send(self, subject: str, payload: bytes) -> None:
        self.spawn(self.bus.publish(subject, payload), "publish")

    async def start(self) -> None:
        self._beats = await self.bus.subscribe(self.ns.nodes, self._heartbeat)
        self.spawn(self._campaign(), "lobby-campaign")
        self.spawn(self._edges_gone(), "lobby-edges")

    async def _heartbeat(self, subject: str, payload: bytes) -> None:
        self._heard[subject.rsplit(".", 1)[1]] = time.monotonic()

    async def _edges_gone(self) -> None:
        """The seats of an edge silent for :data:`EDGE_SILENCE` seconds are disconnected,
        as when their connections close: a dead edge's seat must not hold a table (a
        READY table, Clarkson's, would never start; a FULL one would start a game for a
        connection that is gone)."""
        since = time.monotonic()
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            if not self.leader.is_set() or now - since < EDGE_SILENCE:
                continue  # not long enough to have heard every live edge
            for seat in list(self._seats.values()):
                edge = seat.route.rsplit("-", 1)[0]
                if now - self._heard.get(edge, since) > EDGE_SILENCE:
                    logger.warning(
                        "%s: %s's edge %s is silent; seat freed", self.name, seat.name, edge
                    )
                    self._seats.pop(seat.route, None)
                    table = self.lobby.table_of(seat)
                    if table is not None:  # if the edge lives after all, it hears of it
                        seat.deliver(Dismissed(table.id))
                    self.lobby.disconnect(seat)

    async def _campaign(self) -> None:
        """Try for the lease until this node holds it; then serve until it is lost."""
        period = self.leases.ttl / 3
        while True:
            lease = await self.leases.acquire(lobby_key(), self.name)
            if lease is None:
                await asyncio.sleep(period)
                continue
            self.lease = lease
            self._lost.clear()
            self._keeper = self.leases.keep(lease, lambda _l: self._lost.set())
            for op in (*CALLS, "roomdone"):
                self._subs.append(
                    await self.bus.serve(
                        self.ns.lobby_request(op), self._handler(op), queue="lobby"
                    )
                )
            self.leader.set()
            logger.info("%s: lobby leader (epoch %d)", self.name, lease.epoch)
            await self._lost.wait()
            logger.warning("%s: lobby lease lost; standing by", self.name)
            self.leader.clear()
            await self._unserve()

    async def _unserve(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(BusError):
                await sub.close()
        self._subs.clear()

    def _handler(self, op: str) -> Callable[[bytes], Any]:
        async def handle(payload: bytes) -> bytes:
            if op == "roomdone":
                uid = wire.loads(payload)
                ended = getattr(self.lobby.room_by_uid(uid), "ended", None)
                if callable(ended):  # a RoomTicket
                    ended()
                return b"ok"
            call: LobbyCall = wire.loads(payload)
            seat = self._seat(call.seat)
            method = getattr(self.lobby, op)
            if op in ("join", "sit") and isinstance(self.lobby.room_of(seat), RoomTicket):
                # The edge holds the seat's connection and knows its game is over (it
                # heard the end); the rooms node's "roomdone" may come a moment later.
                self.lobby.quit(seat)
            if op == "join":
                method(call.args[0], seat, rule=call.args[1] if len(call.args) > 1 else FULL)
            elif op == "sit":
                method(call.args[0], seat)
            else:
                method(seat, *call.args)  # renamed: the old name (Clarkson §3.6)
            if op in ("disconnect", "quit"):
                self._seats.pop(seat.route, None)
            return b"ok"

        return handle

    def _seat(self, info: Mapping[str, Any]) -> ProxySeat:
        route = str(info["route"])
        seat = self._seats.get(route)
        if seat is None:
            seat = self._seats[route] = ProxySeat(self, info)
        else:
            seat.update(info)
        return seat

    async def stop(self) -> None:
        if self._beats is not None:
            with contextlib.suppress(BusError):
                await self._beats.close()
        await self._unserve()
        if self._keeper is not None:
            await Leases.stop(self._keeper)
        if self.lease is not None and self.leader.is_set():
            with contextlib.suppress(Exception):
                await self.leases.release(self.lease)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
