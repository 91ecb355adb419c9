"""Restart recovery: every game the last process left unfinished comes back from its log.

``meeple serve`` calls :func:`recover` once its listeners are built (so every game's
lobby registration and the store are in place) and before they accept: each open log
(:meth:`~meeple.server.store.database.Store.open_logs`) is replayed through its game's engine
and handed to the lobby (:meth:`~meeple.server.lobby.tables.Lobby.restore`), which seats each
player again as its protocol allows — a browser holds its seat for the grace period
under its rejoin token, a server bot sits again, a TCP client's connection died with
the old process and its protocol's disconnect rule applies. What survives what, per
protocol, is in docs/durability.md.

The CMPN402 referee's logs are not the lobby's: its listener resumes them itself
(a genesis whose ``table`` names a ``referee``).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from meeple.games.records import RecordError
from meeple.server.lobby import bots
from meeple.server.lobby.tables import TableError, server_lobby
from meeple.server.store.journal import server_store

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = ["Recovered", "recover"]

logger = logging.getLogger(__name__)


@dataclass
class Recovered:
    """What :func:`recover` did with each open log, by room uid."""

    resumed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # no listener serves its game now
    broken: list[str] = field(default_factory=list)  # the log does not replay


def recover(services: Services) -> Recovered:
    """Restore every unfinished lobby game from its log; see the module docstring."""
    store = server_store(services)
    lobby = server_lobby(services)
    lobby.restore_bot = functools.partial(bots.restore_bot, services)
    done = Recovered()
    for uid in store.open_logs():
        log = store.action_log(uid)
        if log is None or "referee" in (log.genesis.get("table") or {}):
            continue
        if not lobby.has_game(log.game):
            logger.warning("room %s: no listener serves %s now; its log stays open", uid, log.game)
            done.skipped.append(uid)
            continue
        try:
            lobby.restore(log)
        except (RecordError, TableError, KeyError, TypeError, ValueError) as e:
            # A log this code cannot replay stays as it is, for a later version or a look.
            logger.error("room %s: its log does not replay (%s); left open", uid, e)
            done.broken.append(uid)
            continue
        done.resumed.append(uid)
    if done.resumed or done.broken:
        logger.info(
            "recovery: %d games restored from their logs, %d left open",
            len(done.resumed),
            len(done.skipped) + len(done.broken),
        )
    return done
