"""What the cluster looks like, from its nodes' heartbeats: ``GET /api/cluster`` on an
edge's web port (:mod:`meeple.node.web`; docs/cluster.md has the shape; ``meeple serve``
answers the same for its one node).

Every node publishes its heartbeat (:meth:`meeple.node.node.Node.info`) on
``<ns>.node.<name>`` every second; :class:`ClusterView` keeps the latest of each node
and forgets a node not heard of for ``node_silence`` seconds
(:class:`~meeple.server.config.ClusterConfig`: a killed node leaves the list within
that; its rooms appear under their new owner once taken over).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import msgspec

from meeple.bus import schema
from meeple.bus.base import Bus, BusError, Subscription
from meeple.bus.subjects import Namespace
from meeple.server.config import ClusterConfig

__all__ = ["ClusterView"]


class ClusterView:
    """The latest heartbeat of every node heard of lately."""

    def __init__(self, bus: Bus, ns: Namespace, *, timing: ClusterConfig | None = None) -> None:
        self.bus = bus
        self.timing = timing or ClusterConfig()
        self.ns = ns
        self._beats: dict[str, tuple[float, dict[str, Any]]] = {}
        self._sub: Subscription | None = None

    async def start(self) -> None:
        async def heard(subject: str, payload: bytes) -> None:
            beat = msgspec.to_builtins(schema.decode(payload, schema.Beat))
            self._beats[beat["name"]] = (time.monotonic(), beat)

        self._sub = await self.bus.subscribe(self.ns.nodes, heard)

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(BusError):
                await self._sub.close()

    def rooms(self) -> list[dict[str, Any]]:
        """Every running room as its owner's last heartbeat described it (uid, game,
        players, protocols) with its ``owner``."""
        now = time.monotonic()
        return [
            {**r, "owner": b["name"]}
            for at, b in sorted(self._beats.values(), key=lambda ab: ab[1]["name"])
            if now - at <= self.timing.node_silence
            for r in b.get("rooms", ())
        ]

    def snapshot(self) -> dict[str, Any]:
        """``GET /api/cluster``'s body: nodes (name, roles, pid, address), the lobby's
        leader, every running room with its owner."""
        now = time.monotonic()
        beats = [b for at, b in self._beats.values() if now - at <= self.timing.node_silence]
        beats.sort(key=lambda b: b["name"])
        leader = next((b["name"] for b in beats if b.get("lobby_leader")), None)
        return {
            "nodes": [{k: b[k] for k in ("name", "roles", "pid", "address")} for b in beats],
            "lobby_leader": leader,
            "rooms": [
                {"uid": r["uid"], "game": r["game"], "owner": b["name"]}
                for b in beats
                for r in b.get("rooms", ())
            ],
        }
