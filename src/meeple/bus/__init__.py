"""The bus between meeple's parts (docs/cluster.md): in-process for ``meeple serve``
(:class:`LocalBus`), NATS for the cluster (:class:`~meeple.bus.natsbus.NatsBus`, imported
from its module so that ``meeple serve`` never imports nats-py). Subjects are named by
:class:`Namespace`."""

from __future__ import annotations

from meeple.bus.base import (
    Bus,
    BusClosed,
    BusError,
    BusTimeout,
    Handler,
    Listener,
    NoResponder,
    RemoteError,
    SubjectHandler,
    Subscription,
    matches,
)
from meeple.bus.local import LocalBus
from meeple.bus.subjects import Namespace, check_token

__all__ = [
    "Bus",
    "BusClosed",
    "BusError",
    "BusTimeout",
    "Handler",
    "Listener",
    "LocalBus",
    "Namespace",
    "NoResponder",
    "RemoteError",
    "SubjectHandler",
    "Subscription",
    "check_token",
    "matches",
]
