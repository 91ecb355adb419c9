"""The lobby leader's state in the namespace's lobby bucket, fenced by the lease epoch.

The lobby's leader (:mod:`meeple.node.lobby`) keeps what a standby needs to carry on —
the open tables with their seats, the rooms it asked for and not yet heard opened, the
last call applied per edge — as one JSON value under the key ``state`` of the bucket
``<ns>-lobby`` (:attr:`~meeple.bus.subjects.Namespace.lobby_bucket`). It writes it
before it answers a call or tells anyone what the call changed (write-ahead, like a
room's log).

**Fencing**, as a room's log (:meth:`meeple.cluster.log.JetStreamLog.claim`): every
write is a compare-and-set on the key's revision (``Nats-Expected-Last-Subject-
Sequence``), the revision of this writer's own last write. A leader that takes the
``lobby`` lease calls :meth:`LobbyState.claim` with the lease's epoch before anything
else: it reads the state, refuses to go on if a later epoch claimed it, and writes it
back under its own epoch, fenced on the revision it read. From then on every write of
an earlier leader — one paused past its lease that wakes up and answers a call — is
refused (:class:`StateFenced`), whenever it arrives; and a write that landed before the
claim is in the state the claim read, so the new leader carries on from the last state
the old one wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from meeple.bus.schema import LobbyStateValue, decode, encode
from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import Backplane, Fenced

__all__ = ["STATE_KEY", "LobbyState", "StateFenced"]

STATE_KEY = "state"


class StateFenced(Exception):
    """The write was refused: a leader with a later epoch claimed the lobby's state."""


class LobbyState:
    """The lobby's state as one leader writes it; see the module doc. One instance is one
    writer: it remembers the revision of its last write."""

    def __init__(self, plane: Backplane, ns: Namespace) -> None:
        self._kv = plane.bucket(ns.lobby_bucket)
        self.ns = ns
        self.epoch: int | None = None  # the epoch this writer claimed under
        self._revision = 0  # the key's revision after this writer's last write

    async def read(self) -> tuple[dict[str, Any], int, int]:
        """The state as stored (``{}``: none yet), the epoch it was written under (-1:
        none) and its revision (0: none)."""
        entry = await self._kv.get(STATE_KEY)
        if entry is None:
            return {}, -1, 0
        value = decode(entry.value or b"{}", LobbyStateValue)
        return value.state, value.epoch, entry.revision

    async def claim(self, owner: str, epoch: int) -> dict[str, Any]:
        """Make this writer the state's only one under lease ``epoch``; the state as the
        last leader left it, to restore. StateFenced when a later epoch claimed it."""
        for _attempt in range(10):
            state, stored_epoch, revision = await self.read()
            if stored_epoch > epoch:
                raise StateFenced(f"the lobby's state was claimed under a later lease ({epoch})")
            try:
                self._revision = await self._put(owner, epoch, state, revision)
            except StateFenced:
                continue  # the old leader wrote meanwhile: claim after its write
            self.epoch = epoch
            return state
        raise StateFenced("the lobby's state kept moving; could not claim it")

    async def write(self, owner: str, state: Mapping[str, Any]) -> None:
        """Replace the state, fenced on this writer's last write (StateFenced: another
        leader claimed it since, or this writer never claimed it)."""
        if self.epoch is None:
            raise StateFenced("this writer has not claimed the lobby's state")
        self._revision = await self._put(owner, self.epoch, state, self._revision)

    async def _put(self, owner: str, epoch: int, state: Mapping[str, Any], expect: int) -> int:
        body = encode(LobbyStateValue(owner=owner, epoch=epoch, state=dict(state)))
        try:
            return await self._kv.put(STATE_KEY, body, expect=expect)
        except Fenced:
            self.epoch = None  # fenced out for good, until it claims again
            raise StateFenced(f"the lobby's state was written by another since {expect}") from None
