"""The tests' PostgreSQL: one throwaway server (meeple.server.store.pgembed) with a migrated
template database, and a fresh copy of it per test (``CREATE DATABASE ... TEMPLATE``:
about 30 ms, so every test starts clean). The fixtures are in tests/conftest.py."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from meeple.server.store.pgembed import EmbeddedPostgres
from meeple.server.store.postgres import PgStore

TEMPLATE = "meeple_template"


@dataclass
class PgServer:
    """The session's PostgreSQL server and its template database (the current schema)."""

    server: EmbeddedPostgres
    template: str = TEMPLATE
    _numbers: Iterator[int] = field(default_factory=itertools.count)

    @classmethod
    @contextlib.contextmanager
    def start(cls) -> Iterator[PgServer]:
        """Start a server, migrate the template; stop the server when the block ends.

        As root, the server runs as the system user ``meeple-pg`` (pgembed makes it);
        it dies with this process however that ends (pgembed's parent-death signal)."""
        with EmbeddedPostgres() as server:
            server.create_database(TEMPLATE)
            PgStore(server.url(TEMPLATE)).close()
            yield cls(server)

    def new_database(self, *, migrated: bool = True) -> tuple[str, str]:
        """A new database's name and URL: a copy of the template, or empty."""
        name = f"test_{next(self._numbers)}"
        url = self.server.create_database(name, template=self.template if migrated else None)
        return name, url


def postmaster_family(pid: int) -> list[int]:
    """``pid`` and every process below it (the postmaster and its backends), from /proc:
    what a test SIGSTOPs to freeze a PostgreSQL of its own."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    """``sig`` to each of ``pids`` that still runs."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


@contextlib.contextmanager
def own_postgres() -> Iterator[EmbeddedPostgres]:
    """A PostgreSQL of the test's own, for tests that freeze or kill it (the session's
    one is shared and never frozen)."""
    with EmbeddedPostgres() as server:
        yield server
