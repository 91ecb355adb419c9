"""The tests' NATS: one server with JetStream (meeple.cluster.natsserver, from the pinned
wheel) per test session, with the repository's users and permissions
(deploy/nats/meeple-auth.conf) and random passwords, and a fresh namespace per test
(its own subjects, stream and buckets, deleted after it). The fixtures are in
tests/conftest.py."""

from __future__ import annotations

import contextlib
import itertools
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from meeple.cluster.natsserver import NatsServer

AUTH = Path(__file__).resolve().parents[1] / "deploy" / "nats" / "meeple-auth.conf"


@dataclass
class NatsEnv:
    """The session's NATS server, its two users' passwords, and namespace numbers."""

    server: NatsServer
    node_password: str
    edge_password: str
    _numbers: Iterator[int] = field(default_factory=itertools.count)

    NODE_USER = "meeple-node"
    EDGE_USER = "meeple-edge"

    @classmethod
    @contextlib.contextmanager
    def start(cls) -> Iterator[NatsEnv]:
        """Start a server on 127.0.0.1 (a free port); stop it when the block ends."""
        # NATS parses a variable's value as a configuration value: "1234-56..." would be a
        # date. A letter first and hex digits after stay a string.
        node, edge = f"pw{secrets.token_hex(16)}", f"pw{secrets.token_hex(16)}"
        env = {"MEEPLE_NATS_NODE_PASSWORD": node, "MEEPLE_NATS_EDGE_PASSWORD": edge}
        with NatsServer(include=AUTH, environment=env) as server:
            yield cls(server, node, edge)

    @property
    def url(self) -> str:
        return self.server.url

    def new_namespace(self) -> str:
        """A namespace root no other test of the session uses."""
        return f"t{next(self._numbers)}-{secrets.token_hex(3)}"
