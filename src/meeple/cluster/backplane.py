"""The backplane: what a node's roles need beneath them, as one typed seam (issue 32.2).

A node's roles (rooms, lobby, store, edge: :mod:`meeple.node`) reach each other and
their durable state through three things, and nothing else:

- the **bus** (:class:`~meeple.bus.base.Bus`): request/reply and publish/subscribe;
- **KV buckets** (:class:`KeyValue`): leases, names, rejoin tokens, the lobby leader's
  state. Every write is a compare-and-set on the key's revision; a key may carry a TTL;
  a watcher hears every change, the current state first;
- the **log stream** (:class:`LogStream`): the rooms' logs, one subject per room,
  appended under a fence (the expected last sequence of the subject) with a message id
  (a retry within the duplicate window is acknowledged, not stored twice).

Two implementations type-check against :class:`Backplane`:

- :class:`~meeple.cluster.jetstream.JetStreamBackplane`: NATS and JetStream (the
  cluster; the stream and buckets of :func:`~meeple.cluster.jetstream.ensure_namespace`);
- :class:`~meeple.cluster.local.LocalBackplane`: one process, no network:
  :class:`~meeple.bus.local.LocalBus`, and the buckets and stream kept in memory and
  written through to one SQLite file (WAL), so a restart finds them again; TTLs on the
  injectable clock (:mod:`meeple.server.clock`).

**Revisions and sequences** are JetStream's: one counter per bucket (per stream), which
only grows, also across restarts; a key's revision is the counter's value at its last
write, a delete or a lapse included (a lease's epoch is the revision of the write that
took it: :mod:`meeple.cluster.lease`). ``expect=0`` means "the key has no entry now" (a
create); a delete marker or a lapse marker is an entry (its revision is the one to
expect). A key whose TTL passes is removed; in a bucket made with lapse markers
(``ns.leases_bucket``) a marker takes its place for a while (``ClusterConfig.
lapse_marker``), so a watcher hears of the lapse.

Exceptions::

    Fenced            the expected revision / last sequence was not the key's / subject's
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from meeple.bus.base import Bus

__all__ = [
    "MSG_ID",
    "Backplane",
    "Fenced",
    "KeyValue",
    "KvEntry",
    "LogStream",
    "Op",
    "Stored",
]

#: The header a log message keeps its message id in (JetStream's name, on both).
MSG_ID = "Nats-Msg-Id"

#: What a KV entry is: a value ("put"), a delete marker ("del"), a TTL's lapse marker.
Op = Literal["put", "del", "lapsed"]


class Fenced(Exception):
    """A compare-and-set write refused: the key's revision, or the subject's last
    sequence, was not the one expected (someone else wrote since)."""


@dataclass(frozen=True, slots=True)
class KvEntry:
    """One key's state in a bucket: its value (``b""`` unless ``op`` is "put"), the
    revision of its last write and what that write was."""

    key: str
    value: bytes
    revision: int
    op: Op = "put"


@dataclass(frozen=True, slots=True)
class Stored:
    """One message of the log stream: its stream sequence, subject, headers and body."""

    seq: int
    subject: str
    headers: Mapping[str, str]
    data: bytes


class KeyValue(Protocol):
    """One bucket of keys, history 1 (the latest entry of each key is kept)."""

    async def get(self, key: str) -> KvEntry | None:
        """The key's latest entry (a delete or lapse marker included); None: none."""
        ...

    async def put(self, key: str, value: bytes, *, expect: int, ttl: int | None = None) -> int:
        """Write ``value`` if the key's revision is ``expect`` (0: it has no entry); the
        new revision. ``ttl`` (whole seconds, at least 1): the key lapses unless written
        again before. :class:`Fenced` when the revision differs."""
        ...

    async def delete(self, key: str, *, expect: int) -> int:
        """Write a delete marker if the key's revision is ``expect``; its revision.
        :class:`Fenced` when it differs."""
        ...

    def watch(self, prefix: str) -> AsyncIterator[KvEntry]:
        """Every change of the keys starting with ``prefix`` from now on, the latest
        entry of each such key first (markers included), until the iterator is closed."""
        ...


class LogStream(Protocol):
    """The stream of the rooms' logs: one subject per room, messages never removed."""

    async def append(
        self, subject: str, data: bytes, headers: Mapping[str, str], *, msg_id: str, expect: int
    ) -> int:
        """Append a message to ``subject`` if its last message has stream sequence
        ``expect`` (0: it has none); its stream sequence. :class:`Fenced` when the
        subject's last sequence differs. Past the fence, a ``msg_id`` seen within the
        duplicate window is a retry: acknowledged with the first one's sequence, not
        stored again (JetStream's order: the fence first, then the window; a writer whose
        append was refused finds its own message id in the subject to tell a retry from
        a conflict, as :class:`~meeple.cluster.log.JetStreamLog` does). The stored message
        keeps ``msg_id`` in its header :data:`MSG_ID`."""
        ...

    async def last(self, subject: str) -> Stored | None:
        """The subject's last message (a direct get); None: it has none."""
        ...

    async def next(self, subject: str, seq: int) -> Stored | None:
        """The subject's first message at or after stream sequence ``seq``."""
        ...

    async def read(self, subject: str) -> list[Stored]:
        """Every message of the subject, in order (empty: none)."""
        ...

    async def subjects(self) -> list[str]:
        """The subjects that have messages."""
        ...


class Backplane(Protocol):
    """The bus, the buckets and the log stream of one node; see the module doc."""

    @property
    def bus(self) -> Bus:
        """The bus (request/reply, publish/subscribe)."""
        ...

    @property
    def connected(self) -> bool:
        """Whether it can reach its state now (a node's /readyz)."""
        ...

    def bucket(self, name: str) -> KeyValue:
        """The KV bucket ``name`` (one of the namespace's)."""
        ...

    def stream(self, name: str) -> LogStream:
        """The log stream ``name`` (the namespace's ``log_stream``)."""
        ...

    async def close(self) -> None:
        """Close the bus and whatever holds the state."""
        ...
