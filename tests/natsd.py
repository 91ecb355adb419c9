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

from meeple.cluster.auth import ADMIN_USER, DEPLOY_EDGES, DEPLOY_NODES, edge_user, users
from meeple.cluster.natsserver import NatsServer

AUTH = Path(__file__).resolve().parents[1] / "deploy" / "nats" / "meeple-auth.conf"


@dataclass
class NatsEnv:
    """The session's NATS server, every user's password, and namespace numbers.

    The tests' nodes run in namespaces of their own, which the role and edge users of the
    permissions file (written for ``meeple``) may not touch: they connect as
    ``meeple-admin`` (:attr:`NODE_USER`). The role and edge users are tested in
    ``meeple``: tests/cluster/test_auth.py, tests/cluster/test_registry.py."""

    server: NatsServer
    passwords: dict[str, str]
    _numbers: Iterator[int] = field(default_factory=itertools.count)

    NODE_USER = ADMIN_USER
    #: An edge of the permissions file (deploy/nats/meeple-auth.conf: edge-1 to edge-3).
    EDGE = DEPLOY_EDGES[0]
    EDGE_USER = edge_user(DEPLOY_EDGES[0])

    @property
    def node_password(self) -> str:
        return self.passwords[self.NODE_USER]

    @property
    def edge_password(self) -> str:
        return self.passwords[self.EDGE_USER]

    @classmethod
    @contextlib.contextmanager
    def start(cls) -> Iterator[NatsEnv]:
        """Start a server on 127.0.0.1 (a free port); stop it when the block ends."""
        # NATS parses a variable's value as a configuration value: "1234-56..." would be a
        # date. A letter first and hex digits after stay a string.
        passwords = {user: f"pw{secrets.token_hex(16)}" for user in deploy_users()}
        env = {deploy_users()[user]: pw for user, pw in passwords.items()}
        with NatsServer(include=AUTH, environment=env) as server:
            yield cls(server, passwords)

    @property
    def url(self) -> str:
        return self.server.url

    def new_namespace(self) -> str:
        """A namespace root no other test of the session uses."""
        return f"t{next(self._numbers)}-{secrets.token_hex(3)}"


def deploy_users() -> dict[str, str]:
    """The users of deploy/nats/meeple-auth.conf, each with its password's variable."""
    return users(DEPLOY_EDGES, DEPLOY_NODES, admin=True)
