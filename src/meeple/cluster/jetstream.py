"""The cluster's JetStream objects: the room-log stream and the KV buckets, made once per
namespace (:func:`ensure_namespace`), and the connection a node makes (:func:`connect_node`).

=====================  =========================================================  =====
object                 configuration                                              why
=====================  =========================================================  =====
stream ``<NS>_LOGS``   subjects ``<ns>.log.*``, file storage, limits retention,    a log
                       no age or size limit, direct gets, deny delete and purge,  is the
                       2-minute duplicate window (``Nats-Msg-Id``)                game
bucket ``<ns>-leases`` history 1, per-key TTL allowed, a marker on a lapse      leases
bucket ``<ns>-names``  history 1                                                  names
bucket ``<ns>-tokens`` history 1, per-key TTL allowed (a token lapses)            tokens
bucket ``<ns>-lobby``  history 1 (the lobby leader's open tables, fenced writes)  lobby
=====================  =========================================================  =====

``replicas`` is 1 on one server and 3 on the production layout's three (docs/cluster.md).
"""

from __future__ import annotations

import contextlib
from typing import Any

import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, KeyValueConfig, RetentionPolicy, StorageType, StreamConfig

from meeple.bus.natsbus import connect
from meeple.bus.subjects import Namespace
from meeple.server.config import ClusterConfig

__all__ = [
    "connect_node",
    "delete_namespace",
    "ensure_namespace",
]

_DEFAULT = ClusterConfig()


async def ensure_namespace(
    js: JetStreamContext,
    ns: Namespace,
    *,
    replicas: int = 1,
    duplicate_window: float = _DEFAULT.duplicate_window,
    lapse_marker: float = _DEFAULT.lapse_marker,
) -> None:
    """Create the namespace's log stream and buckets, or leave them as they are.

    ``duplicate_window``: how long JetStream remembers a message id (seconds): a retry
    within it is acknowledged as a duplicate; a later one is recognised by the fence and
    the stored message. ``lapse_marker``: how long the marker a lapsed lease leaves stays
    in the bucket (seconds). Both :class:`~meeple.server.config.ClusterConfig`'s."""
    with contextlib.suppress(nats.js.errors.BadRequestError):
        # BadRequest: it exists (with this configuration or another, which we keep).
        await js.add_stream(
            StreamConfig(
                name=ns.log_stream,
                description="meeple room logs: genesis, entries, owner marks, end",
                subjects=[ns.logs],
                retention=RetentionPolicy.LIMITS,
                storage=StorageType.FILE,
                num_replicas=replicas,
                max_msgs=-1,
                max_bytes=-1,
                max_age=0,
                max_msgs_per_subject=-1,
                discard=DiscardPolicy.NEW,
                duplicate_window=duplicate_window,
                allow_direct=True,
                deny_delete=True,
                deny_purge=True,
            )
        )
    for bucket in ns.buckets:
        # create_key_value allows per-message TTLs on the bucket's stream. The leases
        # bucket leaves a marker when a key's TTL passes (kept lapse_marker seconds), so a
        # watcher learns that a lease lapsed (meeple.cluster.lease.Leases.watch).
        markers = lapse_marker if bucket == ns.leases_bucket else None
        with contextlib.suppress(nats.js.errors.BadRequestError):
            await js.create_key_value(
                KeyValueConfig(
                    bucket=bucket,
                    history=1,
                    replicas=replicas,
                    direct=True,
                    limit_marker_ttl=markers,
                )
            )


async def delete_namespace(url: str, ns: Namespace, *, user: str, password: str) -> None:
    """Delete the namespace's stream and buckets (tests clean up with it)."""
    nc = await connect(url, user=user, password=password, name="cleanup")
    try:
        js = nc.jetstream()
        for stream in (
            ns.log_stream,
            *(f"KV_{b}" for b in ns.buckets),
        ):
            with contextlib.suppress(nats.js.errors.NotFoundError):
                await js.delete_stream(stream)
    finally:
        await nc.close()


async def connect_node(
    url: str,
    ns: Namespace,
    *,
    user: str | None,
    password: str | None,
    name: str,
    replicas: int = 1,
    timing: ClusterConfig = _DEFAULT,
    **options: Any,
) -> Client:
    """A rooms, lobby or store node's connection, the namespace made sure of
    (``options``: nats.connect's, as :func:`meeple.bus.natsbus.connect`; ``timing``: the
    stream's and buckets' settings, :func:`ensure_namespace`)."""
    nc = await connect(url, user=user, password=password, name=name, **options)
    try:
        await ensure_namespace(
            nc.jetstream(),
            ns,
            replicas=replicas,
            duplicate_window=timing.duplicate_window,
            lapse_marker=timing.lapse_marker,
        )
    except BaseException:
        await nc.close()
        raise
    return nc
