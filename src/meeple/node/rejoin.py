"""Where a browser's rejoin token takes it back: answered by any lobby node.

A browser seat whose connection (or edge) is gone is held by its room's owner for the
rejoin grace, which writes the token's hash → the room and seat to the tokens bucket
(:class:`~meeple.cluster.registry.RejoinTokens`, with the grace as its TTL). Edges may not
read buckets (deploy/nats/meeple-auth.conf), so an edge asks here, on
``<ns>.lobby.req.rejoin`` (queue group ``rejoin``: any lobby node answers), with the
token's SHA-256 — never the token — and then sends the token itself to the room's owner
only (:class:`~meeple.node.wire.Rebind`), which checks it against the genesis's hash.
Asked with a :class:`~meeple.bus.schema.RejoinAsk`, answered with a
:class:`~meeple.bus.schema.SeatAt`.
"""

from __future__ import annotations

import re

from meeple.bus.base import Bus
from meeple.bus.codec import WireError
from meeple.bus.schema import RejoinAsk, SeatAt, decode, encode
from meeple.bus.subjects import Namespace
from meeple.cluster.registry import RejoinTokens
from meeple.node import Service

__all__ = ["OP", "RejoinService"]

OP = "rejoin"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class RejoinService(Service):
    """Answers edges' "where is this token's seat" from the tokens bucket: a
    :class:`~meeple.bus.schema.SeatAt` (its ``room`` None when no seat is held for it)."""

    def __init__(self, bus: Bus, ns: Namespace, tokens: RejoinTokens) -> None:
        super().__init__(bus, ns.lobby_requests(OP), OP)
        self.tokens = tokens

    async def handle(self, payload: bytes, sender: str) -> bytes:
        key = decode(payload, RejoinAsk).hash
        if not _SHA256.fullmatch(key):
            raise WireError("shape", "a rejoin is asked by the token's SHA-256")
        found = await self.tokens.find(key)
        if found is None:
            return encode(SeatAt())
        return encode(SeatAt(room=found.room, seat=found.seat))
