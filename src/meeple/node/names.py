"""Names unique across a cluster's edges: the edge's registry and the lobby nodes' service.

A name in use is a key of the ``<ns>-names`` bucket (:class:`meeple.cluster.registry.Names`:
the casefold of the name, compare-and-set, a per-key TTL). Edges may not touch buckets
(deploy/nats/meeple-auth.conf), so they ask:

- :class:`ClusterNames` is an edge's :class:`~meeple.server.lobby.names.NameRegistry`: a claim
  is checked here first (two connections of this edge), then asked of the cluster on
  ``<ns>.lobby.req.names``; the dialect hears the answer through
  :meth:`~meeple.server.lobby.names.NameRegistry.claim_then` (Twente E001, Clarkson NOK when
  another edge has the name). A name is released when its connection ends. The edge
  renews its names every third of their TTL; an edge that dies stops renewing, and its
  names come free after the TTL (the bucket removes the keys).
- :class:`NameService` answers those requests on every ``lobby`` node (queue group
  ``names``: any one of them answers; the bucket's compare-and-set, not a leader, makes
  a name one holder's).

A holder is ``<edge>.<n>``, one per claim, so the bucket says which edge holds a name.

A dialect's claim (:meth:`ClusterNames.claim_then`) is also refused for a name an account
reserved, asked of a store node at the same time (``reserved``:
:meth:`meeple.node.accounts.BusAccounts.reserved`), and for any name while no store node
answers (fail closed; docs/cluster.md, "Accounts on edges").

Requests (:class:`~meeple.bus.schema.NamesRequest`): ``claim`` a name for a holder →
:class:`~meeple.bus.schema.Ack` ``ok`` or ``taken``; ``renew`` or ``release`` many
(``claims``: name, holder) → :class:`~meeple.bus.schema.NamesLost`, the names renewed
that another holder had taken meanwhile (a renewal came too late).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from meeple.bus.base import Bus, BusClosed, BusError, Payload, Sealed
from meeple.bus.codec import WireError
from meeple.bus.schema import CODEC, OK, TAKEN, NamesLost, NamesRequest, decode
from meeple.bus.subjects import Namespace
from meeple.cluster.registry import Names
from meeple.node import Service, spawn
from meeple.node.ask import NoAnswer, ask
from meeple.server.config import ClusterConfig
from meeple.server.lobby.names import NameRegistry

__all__ = ["ClusterNames", "NameService"]

logger = logging.getLogger(__name__)

OP = "names"


class ClusterNames(NameRegistry):
    """An edge's names, unique across the cluster; see the module doc."""

    def __init__(
        self,
        bus: Bus,
        ns: Namespace,
        node: str,
        *,
        ttl: float,
        timing: ClusterConfig | None = None,
        reserved: Callable[[str], Awaitable[bool]] | None = None,
        reserved_now: Callable[[str], bool] | None = None,
        one_process: bool = False,
    ) -> None:
        """``ttl``: seconds a name stays claimed without a renewal (``meeple node
        --name-ttl``): how long a dead edge's names stay taken. ``reserved``: whether a
        name is an account's (:meth:`meeple.node.accounts.BusAccounts.reserved`), asked
        beside the cluster's claim for a dialect's :meth:`claim_then`; a reserved name,
        or one it cannot tell (it raises: no store node answers), is refused.
        ``reserved_now``: the same, answered at once (the one-process node: the store's
        reserved names in memory, :class:`~meeple.server.lobby.names.StoreReservations`,
        as ``meeple serve``'s), asked before the claim instead of beside it.

        ``one_process``: the names service is in this process (the local backplane), so
        an ask that is not answered in ``ask_wait`` is only behind a busy event loop,
        not lost: it is waited for, for the whole patience, and not sent again (each
        copy sent again would be one more claim for the loaded loop to answer)."""
        super().__init__(reserved=reserved, reserved_now=reserved_now)
        self.one_process = one_process
        self.timing = timing or ClusterConfig()
        self.bus = bus
        self.ns = ns.for_node(node)  # its requests name it: NATS lets it send no other's
        self.node = node
        self.ttl = ttl
        self._held: dict[str, tuple[str, str]] = {}  # casefold -> (name, holder) in the bucket
        self._numbers = itertools.count(1)
        self._renewer: asyncio.Task[None] | None = None

    def claim_then(self, name: str, owner: object, then: Callable[[bool], None]) -> None:
        if not super().claim(name, owner):
            then(False)  # a connection of this edge has it
            return
        if self.reserved_now is not None and not self._unreserved_now(name):
            super().release(name, owner)
            then(False)  # an account's name (or the reservations were never read)
            return
        if name.casefold() in self._held:
            then(True)  # this owner has it cluster-wide already
            return
        self._spawn(self._claim(name, owner, then), f"claim {name}")

    def claim(self, name: str, owner: object) -> bool:
        """For dialects that cannot wait for the answer: this edge's check now, the
        cluster's claim in the background (a name another edge has is kept here, with a
        warning: use :meth:`claim_then` to be refused)."""
        if not super().claim(name, owner):
            return False
        if name.casefold() not in self._held:

            def told(given: bool) -> None:
                if not given and self.holder(name) is owner:
                    logger.warning("%s: name %r is another edge's too", self.node, name)

            self._spawn(self._claim(name, owner, told, keep=True), f"claim {name}")
        return True

    async def _claim(
        self, name: str, owner: object, then: Callable[[bool], None], *, keep: bool = False
    ) -> None:
        holder = f"{self.node}.{next(self._numbers)}"
        request = NamesRequest(op="claim", name=name, holder=holder, ttl=self.ttl)
        if self.reserved is None or keep:
            given = await self._ask(request) == OK
        else:
            # The account check and the claim at once: a claim costs the slower of two
            # round trips, not both. A name found reserved is given back.
            answer, free = await asyncio.gather(
                self._ask(request), self._unreserved(name), return_exceptions=False
            )
            given = answer == OK
            if given and not free:
                self._spawn(self._release([(name, holder)]), f"release {name}")
                given = False
        if given and self.holder(name) is not owner:
            # Released here while the cluster was asked (its connection ended).
            self._spawn(self._release([(name, holder)]), f"release {name}")
            given = False
        elif given:
            self._held[name.casefold()] = (name, holder)
            if self._renewer is None:
                self._renewer = self._spawn(self._renew(), "names-renew")
        elif not keep and self.holder(name) is owner:
            super().release(name, owner)
        then(given)

    def release(self, name: str, owner: object) -> None:
        if self.holder(name) is not owner:
            return
        super().release(name, owner)
        held = self._held.pop(name.casefold(), None)
        if held is not None:
            self._spawn(self._release([held]), f"release {name}")

    async def _release(self, claims: list[tuple[str, str]]) -> None:
        request = NamesRequest(op="release", claims=claims)
        await self._ask(request, patience=self.timing.ask_wait)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            if not self._held:
                continue
            claims = list(self._held.values())
            answer = await self._ask(NamesRequest(op="renew", claims=claims, ttl=self.ttl))
            try:
                lost_names = [] if answer is None else decode(answer, NamesLost).names
            except WireError as e:
                logger.warning("%s: names renew: the answer: %s", self.node, e)
                continue
            for lost in lost_names:
                logger.warning(
                    "%s: name %r was taken elsewhere (renewed too late)", self.node, lost
                )

    async def _ask(self, request: NamesRequest, *, patience: float | None = None) -> bytes | None:
        """The names service's answer; None if none came within ``patience`` seconds
        (``names_patience``: a lobby node may be taking over)."""
        payload = Sealed(request, CODEC)  # frozen: by reference in one process
        patience = self.timing.names_patience if patience is None else patience
        try:
            return await ask(
                self.bus,
                self.ns.lobby_request(OP),
                payload,
                self.timing,
                patience=patience,
                wait=patience if self.one_process else None,
            )
        except BusClosed:
            return None
        except NoAnswer:
            logger.error("%s: names %s: no lobby node answers", self.node, request.op)
        except BusError as e:
            logger.warning("%s: names %s: %s", self.node, request.op, e)
        return None

    def _spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        return spawn(self._tasks, coro, name)

    async def close(self) -> None:
        """Stop renewing; give back every name still held (a clean stop)."""
        if self._renewer is not None:
            self._renewer.cancel()
        claims, self._held = list(self._held.values()), {}
        if claims:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._release(claims), 2 * self.timing.ask_wait)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class NameService(Service):
    """Answers edges' name requests from the names bucket; see the module doc."""

    def __init__(self, bus: Bus, ns: Namespace, names: Names) -> None:
        super().__init__(bus, ns.lobby_requests(OP), OP)
        self.names = names

    async def start(self) -> None:
        async def answer(subject: str, request: NamesRequest) -> Payload:
            return await self.answer(request, subject.rsplit(".", 1)[1])

        # Read as a value: an edge's request in this process is its own (sealed) object.
        self._sub = await self.bus.answer(
            self.subject, answer, CODEC, NamesRequest, queue=self.queue
        )

    async def handle(self, payload: bytes, sender: str) -> bytes:
        """A request as bytes (from another process): :meth:`answer`'s bytes."""
        answer = await self.answer(decode(payload, NamesRequest), sender)
        return answer.encode() if isinstance(answer, Sealed) else answer

    async def answer(self, request: NamesRequest, sender: str) -> Payload:
        """The answer to ``request`` from the edge ``sender``."""
        op = request.op
        ttl = None if request.ttl is None else max(1, round(request.ttl))
        if op == "claim":
            holder = _own(request.holder, sender)
            given = await self.names.claim(request.name, holder, ttl=ttl)
            return OK if given else TAKEN
        claims = [(n, _own(h, sender)) for n, h in request.claims]
        if op == "renew":
            renewed = await asyncio.gather(*(self.names.claim(n, h, ttl=ttl) for n, h in claims))
            lost = [n for (n, _), ok in zip(claims, renewed, strict=True) if not ok]
            return Sealed(NamesLost(names=lost), CODEC)
        await asyncio.gather(*(self.names.release(n, h) for n, h in claims))
        return Sealed(NamesLost(), CODEC)


def _own(holder: str, sender: str) -> str:
    """``holder`` (``<edge>.<n>``) if it is the sending edge's: an edge claims, renews
    and releases its own names only, never another edge's (issue 30.1)."""
    if holder.split(".", 1)[0] != sender:
        raise ValueError(f"a holder of {sender}'s names only, not {holder!r}")
    return holder
