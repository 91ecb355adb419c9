"""The cluster's foundation on NATS JetStream (docs/cluster.md): the NATS server runner,
the room log as a JetStream stream, leases with the log's fence, names and rejoin tokens
in KV, the lobby leader's state. The bus itself is :mod:`meeple.bus`. ``meeple serve``
imports none of this."""

from __future__ import annotations

from meeple.cluster.jetstream import connect_node, delete_namespace, ensure_namespace
from meeple.cluster.lease import Lease, LeaseEvent, LeaseLost, Leases, lobby_key, room_key
from meeple.cluster.lobbystate import LobbyState, StateFenced
from meeple.cluster.log import BlockingJetStreamLog, JetStreamLog, RoomLog
from meeple.cluster.natsserver import (
    MIN_VERSION,
    NatsServer,
    NatsServerError,
    NatsTooOld,
    find_binary,
)
from meeple.cluster.registry import Names, RejoinSeat, RejoinTokens

__all__ = [
    "MIN_VERSION",
    "BlockingJetStreamLog",
    "JetStreamLog",
    "Lease",
    "LeaseEvent",
    "LeaseLost",
    "Leases",
    "LobbyState",
    "Names",
    "NatsServer",
    "NatsServerError",
    "NatsTooOld",
    "RejoinSeat",
    "RejoinTokens",
    "RoomLog",
    "StateFenced",
    "connect_node",
    "delete_namespace",
    "ensure_namespace",
    "find_binary",
    "lobby_key",
    "room_key",
]
