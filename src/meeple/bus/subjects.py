"""Every name the cluster uses on NATS, in one place: subjects, streams, buckets.

One :class:`Namespace` (``meeple`` in production, a fresh one per test) prefixes them
all, so two meeple clusters, or two tests, can share a NATS server without seeing each
other. The names, for the namespace ``meeple`` (docs/cluster.md, Subjects):

=============================  ===============================================  ==========
subject                        what crosses                                     pattern
=============================  ===============================================  ==========
``meeple.room.<uid>.cmd``      a seat's command to the room's owner             request
``meeple.seat.<uid>.<seat>``   one seat's private events (its rack, its turn)   publish
``meeple.view.<uid>``          the room's spectator view (no hidden tiles)      publish
``meeple.lobby.req.<op>``      a lobby request (sit, stand, list) to the leader request
``meeple.lobby.events``        lobby snapshots and changes, to every edge       publish
``meeple.lobby.chat.<game>``   chat outside a game, edge to every edge          publish
``meeple.rooms.open``          the lobby asks a rooms node to open a room       request
``meeple.store.req.<op>``      finished games and ratings, to the store role    request
``meeple.store.req.read_<x>``  an edge's read of them (:data:`STORE_READS`)     request
``meeple.node.<name>``         a node's heartbeat (roles, pid, listeners)       publish
``meeple.log.<uid>``           the room's action log (stream ``MEEPLE_LOGS``)   JetStream
``$KV.meeple-leases.<key>``    room and lobby leases (per-key TTL)              KV
``$KV.meeple-names.<name>``    who uses a name (casefolded)                     KV
``$KV.meeple-tokens.<hash>``   a rejoin token's hash → the seat it takes back   KV
``$KV.meeple-lobby.state``     the lobby leader's open tables (fenced by epoch)  KV
=============================  ===============================================  ==========

Only the first six and the store's reads are for edges (``deploy/nats/meeple-auth.conf``):
a log and the KV buckets hold racks, bags and seeds, and the store's other ops write.
Edges' reply subjects start with :attr:`Namespace.edge_inbox`, so they need no right on
the other nodes' inboxes (where the JetStream API's answers, log reads included, arrive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["STORE_READS", "Namespace", "check_token"]

# The store role's read-only ops, the ones an edge's pages may ask (meeple.node.store):
# a finished game's record by uid or by number, the recent games, a game's leaderboard,
# a player's ratings and games, one rating's history. Public data only (what meeple
# serve's replay and ratings pages show anyone): never a running game.
STORE_READS = (
    "read_game",
    "read_game_number",
    "read_games",
    "read_leaderboard",
    "read_player",
    "read_rating_history",
)

_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,128}")
_ROOT = re.compile(r"[a-z][a-z0-9_-]{0,31}")


def check_token(value: str, what: str = "token") -> str:
    """``value`` if it can be one token of a subject (a room uid, a seat, an op): letters,
    digits, ``_`` and ``-`` only, so it can hold no ``.`` and no wildcard."""
    if not _TOKEN.fullmatch(value):
        raise ValueError(f"not a subject token ({what}): {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Namespace:
    """The names of one meeple cluster on NATS; see the module doc."""

    root: str = "meeple"

    def __post_init__(self) -> None:
        if not _ROOT.fullmatch(self.root):
            raise ValueError(f"not a namespace: {self.root!r} (lowercase, digits, _ and -)")

    # --- the bus -----------------------------------------------------------------------

    def room_command(self, uid: str) -> str:
        """Requests to the owner of room ``uid``."""
        return f"{self.root}.room.{check_token(uid, 'room')}.cmd"

    def seat(self, uid: str, seat: int | str) -> str:
        """Room ``uid``'s private events for one seat."""
        return f"{self.root}.seat.{check_token(uid, 'room')}.{check_token(str(seat), 'seat')}"

    def seats(self, uid: str) -> str:
        """Every seat subject of room ``uid`` (a wildcard, for the room's owner)."""
        return f"{self.root}.seat.{check_token(uid, 'room')}.*"

    def view(self, uid: str) -> str:
        """Room ``uid``'s spectator view."""
        return f"{self.root}.view.{check_token(uid, 'room')}"

    def lobby_request(self, op: str) -> str:
        """A request to the lobby's leader."""
        return f"{self.root}.lobby.req.{check_token(op, 'lobby op')}"

    @property
    def lobby_events(self) -> str:
        """What the lobby tells every edge."""
        return f"{self.root}.lobby.events"

    def lobby_chat(self, game: str) -> str:
        """Chat outside a game, for ``game``'s players on every edge."""
        return f"{self.root}.lobby.chat.{check_token(game, 'game')}"

    @property
    def rooms_open(self) -> str:
        """A request to open a room, to any rooms node (queue group ``rooms``)."""
        return f"{self.root}.rooms.open"

    def store_request(self, op: str) -> str:
        """A request to the store role (queue group ``store``): records and ratings."""
        return f"{self.root}.store.req.{check_token(op, 'store op')}"

    def store_read(self, op: str) -> str:
        """An edge's read-only request to the store role (one of :data:`STORE_READS`)."""
        if op not in STORE_READS:
            raise ValueError(f"not a store read: {op!r}")
        return self.store_request(op)

    @property
    def nodes(self) -> str:
        """Every node's heartbeat (``<ns>.node.<name>``), for ``GET /api/cluster``."""
        return f"{self.root}.node.*"

    def node(self, name: str) -> str:
        return f"{self.root}.node.{check_token(name, 'node')}"

    @property
    def edge_inbox(self) -> str:
        """The prefix of edges' reply subjects (``nats.connect(inbox_prefix=...)``)."""
        return f"_INBOX_{self.root.replace('-', '_')}_edge"

    # --- JetStream and KV ----------------------------------------------------------------

    def log(self, uid: str) -> str:
        """The subject of room ``uid``'s action log in :attr:`log_stream`."""
        return f"{self.root}.log.{check_token(uid, 'room')}"

    @property
    def logs(self) -> str:
        """Every room log's subject (the stream's subjects)."""
        return f"{self.root}.log.*"

    @property
    def log_stream(self) -> str:
        """The JetStream stream of every room's action log."""
        return f"{self.root.upper().replace('-', '_')}_LOGS"

    @property
    def leases_bucket(self) -> str:
        return f"{self.root}-leases"

    @property
    def names_bucket(self) -> str:
        return f"{self.root}-names"

    @property
    def tokens_bucket(self) -> str:
        return f"{self.root}-tokens"

    @property
    def lobby_bucket(self) -> str:
        """The lobby leader's state (open tables, their seats), for its standbys."""
        return f"{self.root}-lobby"

    @property
    def buckets(self) -> tuple[str, ...]:
        """Every KV bucket of the namespace."""
        return (self.leases_bucket, self.names_bucket, self.tokens_bucket, self.lobby_bucket)
