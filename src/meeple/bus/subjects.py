"""Every name the cluster uses on NATS, in one place: subjects, streams, buckets.

One :class:`Namespace` (``meeple`` in production, a fresh one per test) prefixes them
all, so two meeple clusters, or two tests, can share a NATS server without seeing each
other. The names, for the namespace ``meeple`` (docs/cluster.md, Subjects):

====================================  =====================================  =========
subject                               what crosses                           pattern
====================================  =====================================  =========
``meeple.room.<uid>.cmd.<sender>``    a request to the room's owner          request
``meeple.seat.<edge>.<route>.<src>``  one edge seat's events (its rack)      publish
``meeple.view.<uid>``                 the room's spectator view              publish
``meeple.lobby.req.<op>.<sender>``    a lobby request to the leader          request
``meeple.lobby.events``               lobby snapshots and changes            publish
``meeple.lobby.chat.<game>``          chat outside a game, every edge        publish
``meeple.watchchat.<uid>``            a game's spectators' chat, every edge  publish
``meeple.rooms.open``                 the lobby asks a rooms node            request
``meeple.store.req.<op>``             finished games and ratings             request
``meeple.store.req.read_<x>``         an edge's reads (:data:`STORE_READS`)  request
``meeple.store.req.account_<x>``      accounts (:data:`STORE_ACCOUNTS`)      request
``meeple.store.req.keep_<x>``         an edge's keeps (:data:`STORE_KEEPS`)  request
``meeple.node.<name>``                a node's heartbeat                     publish
``meeple.log.<uid>``                  a room's log (``MEEPLE_LOGS``)         JetStream
``$KV.meeple-leases.<key>``           room and lobby leases                  KV
``$KV.meeple-names.<name>``           who uses a name (casefolded)           KV
``$KV.meeple-tokens.<hash>``          a rejoin token's seat                  KV
``$KV.meeple-lobby.state``            the lobby leader's tables              KV
====================================  =====================================  =========

``<src>`` is a room's uid, or ``lobby`` for what the lobby's leader tells the seat.

A request's last token, ``<sender>``, is the name of the node that sent it
(:attr:`Namespace.sender`); a seat's subject names its edge (``<edge>``, the part of its
*route* ``<edge>-<start>_<n>`` before the last ``-``; ``<start>``, new at each start of
the edge, keeps a restarted edge's new seats off its predecessor's routes). So NATS
permissions can pin an edge to its own seats (:mod:`meeple.cluster.auth`,
``deploy/nats/meeple-auth.conf``): edge ``e1`` may publish only requests ending in
``.e1`` and hear only ``meeple.seat.e1.>``, and the owner of a room, told the sender by
the subject, takes a seat's command only from the edge its route names. Only the room,
seat (its own), view, lobby, chat and node subjects and the store's reads are for edges
(the spectators' chat too: what spectators typed, no game state): a log and the KV
buckets hold racks, bags and seeds, and the store's other ops write. An edge's reply
subjects start with :meth:`Namespace.edge_inbox_of`, so it needs no right on other
nodes' inboxes (where the JetStream API's answers, log reads included, arrive) nor on
another edge's."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ANY_SENDER",
    "EDGE_LOBBY_OPS",
    "STORE_ACCOUNTS",
    "STORE_KEEPS",
    "STORE_READS",
    "Namespace",
    "check_token",
    "edge_of",
]

# The store role's read-only ops, the ones an edge's pages may ask (meeple.node.store):
# a finished game's record by uid or by number, the recent games, a game's leaderboard,
# a player's ratings and games, one rating's history. Public data only (what meeple
# serve's replay and ratings pages show anyone): never a running game.
STORE_READS = (
    "read_game",
    "read_game_number",
    "read_games",
    "search_games",
    "read_leaderboard",
    "read_player",
    "read_rating_history",
    "read_analysis",  # a finished game's replay analysis, kept by a keep_analysis
)

# What an edge computed from a finished game's public record and asks the store role
# to keep beside it (meeple.node.store): a replay's analysis (issue 34). The store node
# keeps it only for a stored game, once per analysis version, within a size limit.
STORE_KEEPS = ("keep_analysis",)

# The store role's account ops an edge's pages and names ask (meeple.node.accounts):
# reserve a name, sign in (each with the password, hashed on the store node only), a
# session's name, sign out, whether a name is reserved. None answers a password hash.
STORE_ACCOUNTS = (
    "account_reserve",
    "account_sign_in",
    "account_session",
    "account_sign_out",
    "account_reserved",
)

# The lobby requests an edge sends (meeple.node.edge, names, rejoin): its seats' calls,
# the open tables, its players' names, a browser's rejoin token. Not ``roomdone``, which
# only a room's owner says.
EDGE_LOBBY_OPS = (
    "addbot",  # the web's "add a bot": the leader seats a server bot (issue 32.6)
    "contest",  # the CMPN402 contest's console: reads and actions (meeple.node.contest)
    "create",
    "disconnect",
    "join",
    "leave",
    "quit",
    "ready",
    "renamed",
    "sit",
    "tables",
    "names",
    "rejoin",
)

_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,128}")

#: The sender token of a namespace that no node name was given (tests, tools).
ANY_SENDER = "_"


def edge_of(route: str) -> str:
    """The edge a seat's route (``<edge>-<start>_<n>``, :meth:`meeple.node.edge.EdgeLobby.route`)
    belongs to: its part before the last ``-``."""
    return route.rsplit("-", 1)[0]


_ROOT = re.compile(r"[a-z][a-z0-9_-]{0,31}")


def check_token(value: str, what: str = "token") -> str:
    """``value`` if it can be one token of a subject (a room uid, a seat, an op): letters,
    digits, ``_`` and ``-`` only, so it can hold no ``.`` and no wildcard."""
    if not _TOKEN.fullmatch(value):
        raise ValueError(f"not a subject token ({what}): {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Namespace:
    """The names of one meeple cluster on NATS; see the module doc. ``sender``: the
    node whose requests these are (the last token of :meth:`room_command` and
    :meth:`lobby_request`; :meth:`for_node` sets it)."""

    root: str = "meeple"
    sender: str = ANY_SENDER

    def __post_init__(self) -> None:
        if not _ROOT.fullmatch(self.root):
            raise ValueError(f"not a namespace: {self.root!r} (lowercase, digits, _ and -)")
        check_token(self.sender, "sender")

    def for_node(self, name: str) -> Namespace:
        """The same names, for the requests of node ``name``."""
        return Namespace(self.root, check_token(name, "node"))

    @staticmethod
    def sender_of(subject: str) -> str:
        """Who sent a request on a :meth:`room_commands` or :meth:`lobby_requests`
        subject (its last token; NATS permissions vouch for an edge's)."""
        return subject.rsplit(".", 1)[1]

    # --- the bus -----------------------------------------------------------------------

    def room_command(self, uid: str) -> str:
        """This node's requests to the owner of room ``uid``."""
        return f"{self.root}.room.{check_token(uid, 'room')}.cmd.{self.sender}"

    def room_commands(self, uid: str) -> str:
        """Every node's requests to the owner of room ``uid`` (what the owner serves)."""
        return f"{self.root}.room.{check_token(uid, 'room')}.cmd.*"

    def seat(self, route: str, source: str) -> str:
        """What ``source`` (a room uid, or ``lobby``) tells the edge seat ``route``."""
        edge = check_token(edge_of(check_token(route, "route")), "edge")
        return f"{self.root}.seat.{edge}.{route}.{check_token(source, 'source')}"

    def seat_sources(self, route: str) -> str:
        """Everything for the edge seat ``route`` (a wildcard, for its edge)."""
        return self.seat(route, "x").rsplit(".", 1)[0] + ".*"

    def edge_seats(self, edge: str) -> str:
        """Every seat subject of edge ``edge`` (a wildcard: its NATS permission)."""
        return f"{self.root}.seat.{check_token(edge, 'edge')}.>"

    def view(self, uid: str) -> str:
        """Room ``uid``'s spectator view."""
        return f"{self.root}.view.{check_token(uid, 'room')}"

    def lobby_request(self, op: str) -> str:
        """This node's request to the lobby's leader."""
        return f"{self.root}.lobby.req.{check_token(op, 'lobby op')}.{self.sender}"

    def lobby_requests(self, op: str) -> str:
        """Every node's ``op`` requests (what the lobby serves)."""
        return f"{self.root}.lobby.req.{check_token(op, 'lobby op')}.*"

    @property
    def lobby_events(self) -> str:
        """What the lobby tells every edge."""
        return f"{self.root}.lobby.events"

    def lobby_chat(self, game: str) -> str:
        """Chat outside a game, for ``game``'s players on every edge."""
        return f"{self.root}.lobby.chat.{check_token(game, 'game')}"

    def watch_chat(self, uid: str) -> str:
        """Room ``uid``'s spectators' chat, for its watchers on every edge (issue 34.5)."""
        return f"{self.root}.watchchat.{check_token(uid, 'room')}"

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

    def store_keep(self, op: str) -> str:
        """An edge's keep request to the store role (one of :data:`STORE_KEEPS`)."""
        if op not in STORE_KEEPS:
            raise ValueError(f"not a store keep: {op!r}")
        return self.store_request(op)

    def store_account(self, op: str) -> str:
        """An edge's account request to the store role (one of :data:`STORE_ACCOUNTS`)."""
        if op not in STORE_ACCOUNTS:
            raise ValueError(f"not an account op: {op!r}")
        return self.store_request(op)

    @property
    def nodes(self) -> str:
        """Every node's heartbeat (``<ns>.node.<name>``), for ``GET /api/cluster``."""
        return f"{self.root}.node.*"

    def node(self, name: str) -> str:
        return f"{self.root}.node.{check_token(name, 'node')}"

    @property
    def edge_inbox(self) -> str:
        """The prefix of every edge's reply subjects."""
        return f"_INBOX_{self.root.replace('-', '_')}_edge"

    def edge_inbox_of(self, edge: str) -> str:
        """The prefix of edge ``edge``'s reply subjects (``nats.connect(inbox_prefix=
        ...)``): its own, so no other edge may hear the answers to its requests."""
        return f"{self.edge_inbox}.{check_token(edge, 'edge')}"

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
