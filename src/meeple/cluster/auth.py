"""Who may do what on NATS: the ``authorization`` block of a meeple cluster's NATS server,
one user per role (or mix of roles) and one per edge, each with the least rights its job
needs (issue 30.1; docs/cluster.md, "Permissions").

:func:`auth_config` writes it for a namespace, the edges by name and the role mixes the
cluster's nodes run; ``meeple cluster auth`` prints it, ``meeple cluster up`` writes its
own, and ``deploy/nats/meeple-auth.conf`` is its output for the production layout
(:data:`DEPLOY_EDGES`, :data:`DEPLOY_NODES`). Passwords are never in the file: each
user's is read from nats-server's environment (:func:`password_variable`).

- An **edge** ``e`` (user ``meeple-edge-e``) publishes only requests that end in its own
  name (room commands ``<ns>.room.*.cmd.e``, lobby requests ``<ns>.lobby.req.*.e``), the
  store's read-only requests and its account requests (``STORE_ACCOUNTS``: none answers
  a password hash), chat outside a game, spectators' chat and its own heartbeat; it
  hears only its own seats (``<ns>.seat.e.>``), spectators' views and chat, the lobby's
  events, chat, heartbeats and the answers to its own requests
  (``_INBOX_<ns>_edge.e.>``). No log, no
  bucket, no JetStream API, no other edge's seats or answers: the room's owner, told the
  sender by the subject, takes a seat's command only from the edge that seat is on.
- **rooms**: serves room commands and ``rooms.open``; publishes seats, views, the
  lobby's ``roomdone`` and the store's requests; appends to and reads the room logs;
  holds and watches leases; writes and takes rejoin tokens.
- **lobby**: serves lobby requests; publishes the lobby's events and seats' lobby
  subjects; asks ``rooms.open``; holds the lobby lease; the lobby, names and tokens
  buckets.
- **store**: serves the store's requests. Nothing else, no JetStream.

Every node may answer the requests it serves (``allow_responses``), publish its heartbeat
and hear the others'. The JetStream rights name the namespace's stream and buckets one by
one; rooms and lobby nodes may create them (``ensure_namespace``), none may delete or
purge them. ``admin`` adds ``meeple-admin`` with every right, for an operator's tools
(``nats`` CLI, backups, the tests' clean-up): no node runs with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from meeple.bus.subjects import (
    EDGE_LOBBY_OPS,
    STORE_ACCOUNTS,
    STORE_KEEPS,
    STORE_READS,
    Namespace,
    check_token,
)

__all__ = [
    "ADMIN_USER",
    "DEPLOY_EDGES",
    "DEPLOY_NODES",
    "NODE_ROLES",
    "auth_config",
    "edge_user",
    "node_user",
    "password_variable",
    "users",
]

#: The roles a node user may have (an edge has a user of its own: :func:`edge_user`).
NODE_ROLES = ("rooms", "lobby", "store")
#: The user with every right (an operator's tools; no node).
ADMIN_USER = "meeple-admin"
#: The production layout's edges and node role mixes (docs/cluster.md, Production layout):
#: what ``deploy/nats/meeple-auth.conf`` is generated for, with the mix of all three
#: (``meeple-node``, as ``meeple cluster up`` runs its nodes).
DEPLOY_EDGES = ("edge-1", "edge-2", "edge-3")
DEPLOY_NODES = (("rooms",), ("lobby", "store"), ("rooms", "lobby", "store"))


def node_user(roles: Iterable[str]) -> str:
    """The NATS user of a node with these roles: ``meeple-node`` for all three, else
    ``meeple-`` and the roles in :data:`NODE_ROLES` order (``meeple-lobby-store``)."""
    mix = _mix(roles)
    return "meeple-node" if len(mix) == len(NODE_ROLES) else "meeple-" + "-".join(mix)


def edge_user(edge: str) -> str:
    """The NATS user of edge ``edge`` (its node name): ``meeple-edge-<edge>``."""
    return f"meeple-edge-{check_token(edge, 'edge')}"


def password_variable(user: str) -> str:
    """The environment variable nats-server reads ``user``'s password from:
    ``MEEPLE_NATS_<USER>_PASSWORD``, the user without ``meeple-``, upper case, ``-`` as
    ``_`` (``meeple-edge-edge-1``: ``MEEPLE_NATS_EDGE_EDGE_1_PASSWORD``)."""
    return (
        "MEEPLE_NATS_"
        + re.sub(r"[^A-Z0-9]", "_", user.removeprefix("meeple-").upper())
        + ("_PASSWORD")
    )


def _mix(roles: Iterable[str]) -> tuple[str, ...]:
    wanted = set(roles)
    unknown = wanted - set(NODE_ROLES)
    if unknown or not wanted:
        raise ValueError(
            f"a node user's roles are some of {', '.join(NODE_ROLES)} (an edge has its own "
            f"user): not {sorted(unknown) or 'none'}"
        )
    return tuple(r for r in NODE_ROLES if r in wanted)


def _js(stream: str, *, write: str | None, watch: bool = False) -> tuple[list[str], list[str]]:
    """Publish rights (and subscribe rights) on one stream: read it (direct gets, its
    info), append to it on ``write`` (a subject pattern), watch it (an
    ordered consumer: created, deleted, its flow control answered)."""
    publish = [
        f"$JS.API.STREAM.INFO.{stream}",
        f"$JS.API.DIRECT.GET.{stream}",
        f"$JS.API.DIRECT.GET.{stream}.>",
    ]
    if write is not None:
        publish.append(write)
    if watch:
        publish += [
            "$JS.API.STREAM.NAMES",
            f"$JS.API.CONSUMER.CREATE.{stream}",
            f"$JS.API.CONSUMER.CREATE.{stream}.>",
            f"$JS.API.CONSUMER.DELETE.{stream}.>",
            f"$JS.API.CONSUMER.INFO.{stream}.>",
            f"$JS.FC.{stream}.>",
        ]
    return publish, []


def _kv(bucket: str, *, watch: bool = False) -> tuple[list[str], list[str]]:
    return _js(f"KV_{bucket}", write=f"$KV.{bucket}.>", watch=watch)


def _role_rights(ns: Namespace, role: str) -> tuple[list[str], list[str]]:
    """One role's (publish, subscribe) allow lists; read the module doc."""
    r = ns.root
    publish: list[str] = []
    subscribe: list[str] = []

    def add(rights: tuple[list[str], list[str]]) -> None:
        publish.extend(rights[0])
        subscribe.extend(rights[1])

    if role == "rooms":
        subscribe += [f"{r}.room.*.cmd.*", ns.rooms_open]
        publish += [f"{r}.seat.>", f"{r}.view.*", f"{r}.lobby.req.roomdone.*"]
        publish += [f"{r}.store.req.*"]
        add(_js(ns.log_stream, write=ns.logs))
        add(_kv(ns.leases_bucket, watch=True))
        add(_kv(ns.tokens_bucket))
    elif role == "lobby":
        subscribe += [f"{r}.lobby.req.*.*"]
        publish += [ns.lobby_events, f"{r}.seat.*.*.lobby", ns.rooms_open]
        add(_kv(ns.leases_bucket))
        add(_kv(ns.lobby_bucket))
        add(_kv(ns.names_bucket))
        add(_kv(ns.tokens_bucket))
    elif role == "store":
        subscribe += [f"{r}.store.req.*"]
    else:  # pragma: no cover (checked by _mix)
        raise ValueError(role)
    return publish, subscribe


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _node_permissions(ns: Namespace, roles: Sequence[str]) -> tuple[list[str], list[str]]:
    publish = [ns.nodes]  # its heartbeat (a role user serves every node of its mix)
    subscribe = [ns.nodes, "_INBOX.>"]
    mix = _mix(roles)
    if "rooms" in mix or "lobby" in mix:
        # Either may be the first to start: it makes sure of the stream and every bucket
        # (meeple.cluster.jetstream.ensure_namespace keeps one that exists as it is).
        streams = (ns.log_stream, *(f"KV_{b}" for b in ns.buckets))
        publish += ["$JS.API.INFO", *(f"$JS.API.STREAM.CREATE.{s}" for s in streams)]
    for role in mix:
        p, s = _role_rights(ns, role)
        publish += p
        subscribe += s
    return _unique(publish), _unique(subscribe)


def _edge_permissions(ns: Namespace, edge: str) -> tuple[list[str], list[str]]:
    r = ns.root
    publish = [
        f"{r}.room.*.cmd.{edge}",
        *(f"{r}.lobby.req.{op}.{edge}" for op in EDGE_LOBBY_OPS),
        f"{r}.lobby.chat.*",
        f"{r}.watchchat.*",
        ns.node(edge),
        *(ns.store_read(op) for op in STORE_READS),
        # A replay's analysis it computed (issue 34): kept only for a stored game.
        *(ns.store_keep(op) for op in STORE_KEEPS),
        # Accounts (meeple.node.accounts): none of them answers a password hash.
        *(ns.store_account(op) for op in STORE_ACCOUNTS),
    ]
    subscribe = [
        ns.edge_seats(edge),
        f"{r}.view.*",
        ns.lobby_events,
        f"{r}.lobby.chat.*",
        f"{r}.watchchat.*",
        ns.nodes,
        ns.edge_inbox_of(edge) + ".>",
    ]
    return publish, subscribe


def _list(items: Sequence[str], indent: str) -> str:
    return "[\n" + ",\n".join(f'{indent}  "{item}"' for item in items) + "\n" + indent + "]"


def _user(name: str, publish: Sequence[str], subscribe: Sequence[str], responds: bool) -> str:
    i = "      "
    lines = [
        "    {",
        f'      user: "{name}"',
        f"      password: ${password_variable(name)}",
        "      permissions: {",
        f"        publish: {{ allow: {_list(publish, i + '  ')} }}",
        f"        subscribe: {{ allow: {_list(subscribe, i + '  ')} }}",
    ]
    if responds:
        lines.append("        allow_responses: true")
    lines += ["      }", "    }"]
    return "\n".join(lines)


def users(
    edges: Sequence[str], nodes: Sequence[Sequence[str]] = (NODE_ROLES,), *, admin: bool = False
) -> dict[str, str]:
    """The users :func:`auth_config` defines, each with its password's variable."""
    names = [ADMIN_USER] if admin else []
    names += [node_user(roles) for roles in nodes] + [edge_user(edge) for edge in edges]
    return {name: password_variable(name) for name in names}


def auth_config(
    ns: Namespace,
    edges: Sequence[str],
    nodes: Sequence[Sequence[str]] = (NODE_ROLES,),
    *,
    admin: bool = False,
) -> str:
    """The ``authorization { users = [...] }`` block for namespace ``ns``: a user per
    edge name in ``edges`` and per role mix in ``nodes`` (each some of
    :data:`NODE_ROLES`), and ``meeple-admin`` when ``admin``; see the module doc.
    ValueError for a bad name, or two users whose password variables would clash."""
    users: list[tuple[str, list[str], list[str], bool]] = []
    if admin:
        users.append((ADMIN_USER, [">"], [">"], False))
    for roles in nodes:
        users.append((node_user(roles), *_node_permissions(ns, roles), True))
    for edge in edges:
        users.append((edge_user(edge), *_edge_permissions(ns, edge), False))
    variables = [password_variable(u[0]) for u in users]
    if len(set(variables)) != len(variables):
        raise ValueError(f"two users would read the same password variable: {variables}")
    header = (
        "# Generated by meeple.cluster.auth (`meeple cluster auth`): users and permissions"
        f" for the\n# namespace `{ns.root}`; passwords from nats-server's environment"
        " (docs/cluster.md, Permissions).\n"
    )
    body = ",\n".join(_user(*u) for u in users)
    return f"{header}authorization {{\n  users = [\n{body}\n  ]\n}}\n"
