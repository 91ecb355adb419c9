"""Player names, unique across the whole server and every protocol.

A dialect that can wait for the answer claims a name with :meth:`NameRegistry.claim_then`:
in one process the answer comes at once; on a cluster edge
(:class:`meeple.node.names.ClusterNames`) it comes once every edge's names were
consulted, a bus round trip later (the dialect holds the client's next messages
meanwhile, as Twente's ANNOUNCING state does).

Reserved names (issue 32.6; docs/web.md, "Reserved names"): :meth:`~NameRegistry.claim_then`
refuses a name an account reserved at ``/account`` (Twente E001, Clarkson NOK, AM27
INFO NICKNAME, Spectrangle invalidName), and any name while the check fails (fail
closed: a reserved name is never given while the reservations cannot be read). The
check is ``reserved_now`` (answered at once: ``meeple serve``'s
:class:`StoreReservations`, the reserved names in memory) or ``reserved`` (answered
later: a cluster edge asks a store node, :meth:`meeple.node.accounts.BusAccounts.reserved`).
:meth:`~NameRegistry.claim` is not checked: CMPN402 agents, server bots, and the
browser's seats (which ask :func:`meeple.web.accounts.may_use` first).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.ports import NamesPort
    from meeple.server.store.database import Store

__all__ = ["NameRegistry", "StoreReservations", "server_reservations"]

logger = logging.getLogger(__name__)


class NameRegistry:
    """Claims and releases player names. Case-insensitive, so ``Alice`` and ``alice``
    cannot both play: in a lobby list or a score line they would be confused.

    The checks of :meth:`claim_then` against the reserved names: ``reserved_now``
    (whether a name is an account's, answered at once) and ``reserved`` (answered
    later, off the event loop); a reserved name, or one a check cannot tell (it raises),
    is given back and refused. None: not checked."""

    def __init__(
        self,
        *,
        reserved: Callable[[str], Awaitable[bool]] | None = None,
        reserved_now: Callable[[str], bool] | None = None,
    ) -> None:
        self._owners: dict[str, object] = {}
        self.reserved = reserved
        self.reserved_now = reserved_now
        self._tasks: set[asyncio.Task[Any]] = set()

    def claim(self, name: str, owner: object) -> bool:
        """Give ``name`` to ``owner``; False when someone else holds it. Not checked
        against the reserved names (a dialect uses :meth:`claim_then`)."""
        key = name.casefold()
        holder = self._owners.get(key)
        if holder is not None and holder is not owner:
            return False
        self._owners[key] = owner
        return True

    def claim_then(self, name: str, owner: object, then: Callable[[bool], None]) -> None:
        """Claim ``name`` for ``owner`` and call ``then`` with whether it was given: at
        once, unless a ``reserved`` check is asked (then once it answers; the name is
        held meanwhile, so no other connection takes it while it is checked)."""
        if not self.claim(name, owner):
            then(False)
            return
        if self.reserved_now is not None and not self._unreserved_now(name):
            self.release(name, owner)
            then(False)
            return
        if self.reserved is None:
            then(True)
            return
        self._spawn(self._checked(name, owner, then), f"check {name}")

    def _unreserved_now(self, name: str) -> bool:
        assert self.reserved_now is not None
        try:
            return not self.reserved_now(name)
        except Exception as e:  # the reservations were never read
            logger.warning("name %r refused: no account check: %s", name, e)
            return False

    async def _checked(self, name: str, owner: object, then: Callable[[bool], None]) -> None:
        free = await self._unreserved(name)
        if self.holder(name) is not owner:
            then(False)  # released while it was checked (its connection ended)
            return
        if not free:
            self.release(name, owner)
        then(free)

    async def _unreserved(self, name: str) -> bool:
        """Whether ``name`` is no account's; False when that cannot be told (fail
        closed: a reserved name is never given while its reservation cannot be read)."""
        assert self.reserved is not None
        try:
            return not await self.reserved(name)
        except Exception as e:  # the store does not answer, or a bad answer
            logger.warning("name %r refused: no account check: %s", name, e)
            return False

    def release(self, name: str, owner: object) -> None:
        """Free ``name`` if ``owner`` holds it (a no-op otherwise)."""
        key = name.casefold()
        if self._owners.get(key) is owner:
            del self._owners[key]

    def holder(self, name: str) -> object | None:
        return self._owners.get(name.casefold())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.casefold() in self._owners

    def __len__(self) -> int:
        return len(self._owners)

    def _spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("names: %s failed", task.get_name(), exc_info=task.exception())

    async def close(self) -> None:
        """Stop the checks under way (the server stops: their connections are closed)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class StoreReservations:
    """``meeple serve``'s reserved names, in memory: the casefold of every name reserved
    in its store, read once (:meth:`load`, at start-up) and kept current by
    :meth:`add` (:meth:`meeple.web.accounts.Accounts.reserve`).

    Decision (issue 32.6): in memory rather than a read of the store per name, because
    ``meeple serve`` is the one writer of its database (``DatabaseClaim``) and an account
    is never deleted, so the set is exact; a name is then checked at once, on the event
    loop, without a thread or a database round trip, and a flood of connections cannot
    exhaust the store's readers (and so be refused for it). Until it is read it raises
    :class:`LookupError`: every name is refused (fail closed)."""

    def __init__(self, folded: Iterable[str] | None = None) -> None:
        self._folded: set[str] | None = None if folded is None else set(folded)
        self._lock = threading.Lock()  # Accounts reads it from the store's reader threads

    @classmethod
    def load(cls, store: Store) -> StoreReservations:
        """The names reserved in ``store`` (one read)."""
        return cls(store.reserved_names())

    def reserved(self, name: str) -> bool:
        """Whether an account reserved ``name`` (compared by casefold)."""
        with self._lock:
            if self._folded is None:
                raise LookupError("the reserved names were not read")
            return name.casefold() in self._folded

    def add(self, name: str) -> None:
        """``name`` was reserved just now."""
        with self._lock:
            if self._folded is not None:
                self._folded.add(name.casefold())

    def __len__(self) -> int:
        return len(self._folded or ())


def server_reservations(services: Services) -> StoreReservations:
    """``meeple serve``'s one :class:`StoreReservations`, read from its store on first use."""
    from meeple.server.store.journal import server_store

    if services.reservations is None:
        services.reservations = StoreReservations.load(server_store(services))
    return services.reservations


def _conforms(names: NameRegistry) -> NamesPort:
    """What mypy checks and nothing calls: the registry (and a cluster edge's, its
    subclass) is the names port (meeple.server.ports)."""
    return names
