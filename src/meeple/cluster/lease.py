"""Leases: who owns a room (or leads the lobby) now, in the namespace's leases bucket.

A lease is one KV key (``room.<uid>``, ``lobby``) whose value names the owner, written
with a per-key TTL (``Nats-TTL``, NATS >= 2.11): the server deletes it when the TTL
passes without a renewal. Every write is a compare-and-set on the key's revision
(``Nats-Expected-Last-Subject-Sequence``), so:

- :meth:`Leases.acquire` succeeds only while nobody holds the key (never held, released,
  or lapsed); two nodes trying at once: one wins;
- :meth:`Leases.renew` (the owner, every third of the TTL: :meth:`Leases.keep`) succeeds
  only if nobody wrote the key since the owner's last write, so an owner whose lease
  lapsed and was taken learns it (:class:`LeaseLost`);
- :meth:`Leases.release` gives it up at once (a clean shutdown), again only if it is
  still the caller's.

The bucket is the node's backplane's (:mod:`meeple.cluster.backplane`): JetStream's KV
on a cluster, where the headers below do the work, or the in-process backplane's, which
keeps the same rules (:mod:`meeple.cluster.local`).

The **epoch** of a lease is the bucket's stream sequence of the write that acquired it:
every later lease of the same key has a greater one. A new owner claims the room's log
with it (:meth:`meeple.cluster.log.JetStreamLog.claim`), and that fences the old owner
out of the log: a lease alone cannot stop an owner that is paused (SIGSTOP, a long GC, a
VM migration) past its TTL and then wakes up believing it still owns the room — the log
refuses its appends whatever it believes.

TTLs are whole seconds, at least 1 (the server's granularity); the server removes an
expired key within about the TTL (measured: 1.0 s for 1 s on loopback) and leaves a
marker in its place (``Nats-Marker-Reason: MaxAge``) that :meth:`Leases.watch` reports:
the other nodes hear of a lapse when it happens, without polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace

from meeple.bus.schema import LeaseValue, decode, encode
from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import Backplane, Fenced, KvEntry

__all__ = ["Lease", "LeaseEvent", "LeaseLost", "Leases", "lobby_key", "room_key"]

logger = logging.getLogger(__name__)


def _freed(entry: KvEntry) -> str | None:
    """Why an entry of the bucket frees its key: "released" (a delete marker), "lapsed"
    (the marker left when the TTL passed); None for a lease."""
    if entry.op == "del":
        return "released"
    if entry.op == "lapsed":
        return "lapsed"
    return None


def room_key(uid: str) -> str:
    """The lease key of room ``uid``."""
    return f"room.{uid}"


def lobby_key() -> str:
    """The lease key of the lobby's leader."""
    return "lobby"


@dataclass(frozen=True, slots=True)
class LeaseEvent:
    """A change of a lease, as :meth:`Leases.watch` reports it: ``state`` is "held"
    (``owner`` took or renewed it), "released" or "lapsed" (nobody holds it now)."""

    key: str
    state: str
    owner: str | None
    revision: int


class LeaseLost(Exception):
    """The lease is no longer the caller's: it lapsed, and maybe another node took it."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease held: its key, owner, epoch (fixed while held), latest revision and TTL."""

    key: str
    owner: str
    epoch: int
    revision: int
    ttl: int


class Leases:
    """The namespace's leases bucket on a node's backplane; see the module doc."""

    def __init__(
        self,
        plane: Backplane,
        ns: Namespace,
        *,
        ttl: int = 2,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        if int(ttl) != ttl or ttl < 1:
            raise ValueError(f"a lease's TTL is whole seconds, at least 1: {ttl!r}")
        self._kv = plane.bucket(ns.leases_bucket)
        self.ns = ns
        self.ttl = int(ttl)
        self._now = now
        # Each lease kept (:meth:`keep`): when it was last written (taken or renewed)
        # and the last renewal's failure since (a rooms node's /readyz: :attr:`failing`).
        self._kept: dict[str, tuple[float, str | None]] = {}

    @property
    def failing(self) -> str | None:
        """Why the leases kept are not renewing now, or None: a renewal failed and none
        succeeded since, or none succeeded for a TTL (one that hangs: the lease lapses in
        the bucket meanwhile). A lease no longer kept (its room ended, moved or was lost)
        says nothing."""
        now = self._now()
        for key, (since, error) in sorted(self._kept.items()):
            late = now - since
            if error is not None:
                return f"{key}: {error} (renewed {late:.1f} s ago)"
            if late > self.ttl:
                return f"{key}: not renewed for {late:.1f} s (TTL {self.ttl} s)"
        return None

    async def holder(self, key: str) -> Lease | None:
        """Who holds ``key`` now, as the bucket says (None: nobody)."""
        found = await self._current(key)
        return None if found is None or isinstance(found, int) else found

    async def _current(self, key: str) -> Lease | int | None:
        """The live lease on ``key``; else the revision of its delete marker, or None."""
        entry = await self._kv.get(key)
        if entry is None:
            return None
        if _freed(entry) is not None:
            return entry.revision
        value = decode(entry.value or b"{}", LeaseValue)
        return Lease(key, value.owner, value.epoch or entry.revision, entry.revision, self.ttl)

    async def acquire(self, key: str, owner: str) -> Lease | None:
        """Take ``key`` for ``owner`` if nobody holds it; the lease, or None when
        someone does (``owner`` included: an earlier incarnation of it may still run)."""
        found = await self._current(key)
        if isinstance(found, Lease):
            return None
        try:
            seq = await self._write(key, LeaseValue(owner=owner), expect=found or 0)
        except LeaseLost:
            return None  # another node acquired it between our read and our write
        return Lease(key, owner, seq, seq, self.ttl)

    async def renew(self, lease: Lease) -> Lease:
        """Extend ``lease`` by its TTL from now; the renewed lease. LeaseLost when it
        lapsed or was taken."""
        value = LeaseValue(owner=lease.owner, epoch=lease.epoch)
        seq = await self._write(lease.key, value, expect=lease.revision)
        return replace(lease, revision=seq)

    async def release(self, lease: Lease) -> None:
        """Give ``lease`` up now, if it is still the caller's (else nothing to do). The
        caller's copy may be older than the bucket's (its keeper renewed it since): the
        lease held under the same owner and epoch is the caller's, at its revision now."""
        for _ in range(2):
            try:
                await self._kv.delete(lease.key, expect=lease.revision)
                return
            except Fenced:
                pass
            current = await self.holder(lease.key)
            if current is None or (current.owner, current.epoch) != (lease.owner, lease.epoch):
                return  # lapsed, or another's now
            lease = current

    async def _describe(self, key: str) -> str:
        """What the bucket holds at ``key`` now, for a log line."""
        try:
            entry = await self._kv.get(key)
        except Exception as e:  # the line is for the reader: never the keeper's failure
            return f"unreadable: {e!r}"
        if entry is None:
            return "nothing"
        freed = _freed(entry)
        if freed is not None:
            return f"{freed} at revision {entry.revision}"
        owner = decode(entry.value or b"{}", LeaseValue).owner
        return f"{owner}'s at revision {entry.revision}"

    async def _write(self, key: str, value: LeaseValue, *, expect: int) -> int:
        try:
            return await self._kv.put(key, encode(value), expect=expect, ttl=self.ttl)
        except Fenced:
            raise LeaseLost(f"lease {key}: written by someone else since {expect}") from None

    def keep(
        self,
        lease: Lease,
        on_lost: Callable[[Lease], None],
        *,
        every: float | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> asyncio.Task[None]:
        """Renew ``lease`` every ``every`` seconds (a third of the TTL), on the ticks of
        the clock (``now``'s multiples of it, shared by every lease kept), until the task
        is cancelled; ``on_lost(lease)`` once if a renewal finds it lost. A renewal that
        fails for another reason (NATS unreachable for a moment) is tried again at the
        next tick: the lease may lapse meanwhile, and the next renewal then says so.
        ``sleep`` waits between renewals (injectable; the TTL itself is the server's)."""
        period = self.ttl / 3 if every is None else every
        kept = self._kept

        async def run() -> None:
            current = lease
            kept[lease.key] = (self._now(), None)
            try:
                while True:
                    # On the ticks of the clock (multiples of the period), not a period
                    # after each lease was taken: the renewals of a node's leases wake
                    # in one turn of the loop, so the local backplane commits them in
                    # one transaction (group commit) rather than one each. The first
                    # renewal comes at most one period after the lease was taken, as
                    # every later one.
                    await sleep(period - self._now() % period)
                    try:
                        current = await self.renew(current)
                        kept[lease.key] = (self._now(), None)
                    except LeaseLost:
                        logger.warning(
                            "lease %s of %s lost (held at revision %d; now %s)",
                            current.key,
                            current.owner,
                            current.revision,
                            await self._describe(current.key),
                        )
                        on_lost(current)
                        return
                    except Exception as e:
                        # Not the lease's loss: NATS away for a moment, a timeout, a
                        # closed connection, the local file's disk. Tried again next tick.
                        logger.warning("lease %s: renewal failed: %s", current.key, e)
                        since = kept.get(lease.key, (self._now(), None))[0]
                        kept[lease.key] = (since, str(e) or type(e).__name__)
            finally:
                kept.pop(lease.key, None)

        return asyncio.get_running_loop().create_task(run(), name=f"lease {lease.key}")

    async def watch(self, prefix: str = "room.") -> AsyncIterator[LeaseEvent]:
        """Every change of the leases whose keys start with ``prefix`` from now on, the
        current state of each first: how a rooms node learns that a room's lease lapsed
        (the bucket's marker, within about the TTL) or was released, and takes it over.
        A key whose marker is gone (``ClusterConfig.lapse_marker``, the bucket's) is
        not reported: a node that starts late finds such rooms among the open logs."""
        async for entry in self._kv.watch(prefix):
            why = _freed(entry)
            if why is not None:
                yield LeaseEvent(entry.key, why, None, entry.revision)
            else:
                owner = decode(entry.value or b"{}", LeaseValue).owner
                yield LeaseEvent(entry.key, "held", owner, entry.revision)

    @staticmethod
    async def stop(task: asyncio.Task[None]) -> None:
        """Cancel a :meth:`keep` task and wait for it."""
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
