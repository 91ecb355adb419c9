"""The tests' PostgreSQL: one throwaway server (meeple.server.store.pgembed) with a migrated
template database, and a fresh copy of it per test (``CREATE DATABASE ... TEMPLATE``:
about 30 ms, so every test starts clean). The fixtures are in tests/conftest.py."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

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
