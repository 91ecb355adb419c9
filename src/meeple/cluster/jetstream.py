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

:class:`JetStreamBackplane` is the cluster's :class:`~meeple.cluster.backplane.Backplane`
over one connection: its buckets and stream are these, its bus is
:class:`~meeple.bus.natsbus.NatsBus`. A key's revision is its bucket stream's sequence;
the compare-and-set is ``Nats-Expected-Last-Subject-Sequence``; a TTL is ``Nats-TTL``
(NATS >= 2.11); the fenced append also carries ``Nats-Msg-Id``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import (
    DeliverPolicy,
    DiscardPolicy,
    KeyValueConfig,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)

from meeple.bus.base import Bus
from meeple.bus.natsbus import NatsBus, connect
from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import MSG_ID, Fenced, KvEntry, Op, Stored
from meeple.server.config import ClusterConfig

__all__ = [
    "JetStreamBackplane",
    "connect_node",
    "delete_namespace",
    "ensure_namespace",
]

EXPECT = "Nats-Expected-Last-Subject-Sequence"

_TTL = "Nats-TTL"
_KV_OP = "KV-Operation"
_MARKER = "Nats-Marker-Reason"
# JSStreamWrongLastSequenceErrF and its constant form: the fence refused the publish.
_WRONG_LAST = (10071, 10164)
# Messages per batched direct get.
_BATCH = 1000

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


def _op(headers: Mapping[str, str]) -> Op:
    """What a bucket's message is: a delete marker, the server's marker where a TTL
    passed, or a value."""
    if headers.get(_KV_OP) in ("DEL", "PURGE"):
        return "del"
    if headers.get(_MARKER):
        return "lapsed"
    return "put"


def _headers(msg: Msg) -> dict[str, str]:
    return {str(k): str(v) for k, v in (msg.headers or {}).items()}


class _Bucket:
    """One KV bucket over JetStream (:class:`~meeple.cluster.backplane.KeyValue`)."""

    def __init__(self, js: JetStreamContext, bucket: str) -> None:
        self._js = js
        self._bucket = bucket
        self._stream = f"KV_{bucket}"
        self._prefix = f"$KV.{bucket}."

    async def get(self, key: str) -> KvEntry | None:
        try:
            msg = await self._js.get_last_msg(self._stream, self._prefix + key, direct=True)
        except nats.js.errors.NotFoundError:
            return None
        assert msg.seq is not None
        headers = {str(k): str(v) for k, v in (msg.headers or {}).items()}
        op = _op(headers)
        return KvEntry(key, (msg.data or b"") if op == "put" else b"", msg.seq, op)

    async def put(self, key: str, value: bytes, *, expect: int, ttl: int | None = None) -> int:
        headers = {EXPECT: str(expect)}
        if ttl is not None:
            headers[_TTL] = f"{int(ttl)}s"
        return await self._publish(key, value, headers)

    async def delete(self, key: str, *, expect: int) -> int:
        return await self._publish(key, b"", {_KV_OP: "DEL", EXPECT: str(expect)})

    async def _publish(self, key: str, body: bytes, headers: dict[str, str]) -> int:
        try:
            ack = await self._js.publish(self._prefix + key, body, headers=headers)
        except nats.js.errors.APIError as e:
            if e.err_code in _WRONG_LAST:
                raise Fenced(f"{self._bucket} {key}: written since {headers[EXPECT]}") from None
            raise
        return int(ack.seq)

    async def watch(self, prefix: str) -> AsyncIterator[KvEntry]:
        queue: asyncio.Queue[Msg] = asyncio.Queue()

        async def put(msg: Msg) -> None:
            queue.put_nowait(msg)

        # An ordered consumer from the last message of each key: the current state, then
        # every change.
        sub = await self._js.subscribe(
            f"{self._prefix}{prefix}>",
            cb=put,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
        )
        start = len(self._prefix)
        try:
            while True:
                msg = await queue.get()
                op = _op(_headers(msg))
                data = (msg.data or b"") if op == "put" else b""
                yield KvEntry(msg.subject[start:], data, msg.metadata.sequence.stream, op)
        finally:
            await sub.unsubscribe()


class _Stream:
    """The log stream over JetStream (:class:`~meeple.cluster.backplane.LogStream`)."""

    def __init__(self, nc: Client, js: JetStreamContext, name: str, timeout: float) -> None:
        self._nc = nc
        self._js = js
        self._name = name
        self._timeout = timeout

    async def append(
        self, subject: str, data: bytes, headers: Mapping[str, str], *, msg_id: str, expect: int
    ) -> int:
        sent = {**headers, MSG_ID: msg_id, EXPECT: str(expect)}
        try:
            ack = await self._js.publish(subject, data, headers=sent, stream=self._name)
        except nats.js.errors.APIError as e:
            if e.err_code in _WRONG_LAST:
                raise Fenced(f"{subject}: the log moved on from {expect}") from None
            raise
        return int(ack.seq)

    async def last(self, subject: str) -> Stored | None:
        try:
            m = await self._js.get_last_msg(self._name, subject, direct=True)
        except nats.js.errors.NotFoundError:
            return None
        assert m.seq is not None
        return Stored(m.seq, subject, _headers_of(m.headers), m.data or b"")

    async def next(self, subject: str, seq: int) -> Stored | None:
        try:
            m = await self._js.get_msg(self._name, seq=seq, subject=subject, direct=True, next=True)
        except nats.js.errors.NotFoundError:
            return None
        assert m.seq is not None
        return Stored(m.seq, subject, _headers_of(m.headers), m.data or b"")

    async def read(self, subject: str) -> list[Stored]:
        """Batched direct gets (NATS >= 2.11, ADR-31): one round trip per
        :data:`_BATCH` messages."""
        out: list[Stored] = []
        inbox = self._nc.new_inbox()
        sub = await self._nc.subscribe(inbox)
        try:
            start = 1
            while True:
                request = {"seq": start, "next_by_subj": subject, "batch": _BATCH}
                await self._nc.publish(
                    f"$JS.API.DIRECT.GET.{self._name}", json.dumps(request).encode(), reply=inbox
                )
                got = 0
                while True:
                    m = await sub.next_msg(timeout=self._timeout)
                    h = _headers(m)
                    if "Status" in h:  # 204: the end of the batch; 404: nothing (more)
                        break
                    out.append(Stored(int(h["Nats-Sequence"]), subject, h, m.data))
                    got += 1
                if got < _BATCH:
                    return out
                start = out[-1].seq + 1
        finally:
            await sub.unsubscribe()

    async def subjects(self) -> list[str]:
        try:
            info = await self._js.stream_info(self._name, subjects_filter=">")
        except nats.js.errors.NotFoundError:
            return []
        return list(info.state.subjects or {})


def _headers_of(headers: Mapping[str, str] | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in (headers or {}).items()}


class JetStreamBackplane:
    """The cluster's :class:`~meeple.cluster.backplane.Backplane` over one NATS
    connection (made by :func:`connect_node`, or :func:`meeple.bus.natsbus.connect` for a
    node that uses no bucket); :meth:`close` drains it when ``owns``."""

    def __init__(
        self, nc: Client, *, timeout: float = _DEFAULT.jetstream_wait, owns: bool = True
    ) -> None:
        """``timeout``: one JetStream call's wait (``ClusterConfig.jetstream_wait``)."""
        self.nc = nc
        self._js = nc.jetstream(timeout=timeout)
        self._timeout = timeout
        self._bus = NatsBus(nc, owns=owns)

    @property
    def bus(self) -> Bus:
        return self._bus

    @property
    def connected(self) -> bool:
        return bool(self.nc.is_connected)

    def bucket(self, name: str) -> _Bucket:
        return _Bucket(self._js, name)

    def stream(self, name: str) -> _Stream:
        return _Stream(self.nc, self._js, name, self._timeout)

    async def close(self) -> None:
        await self._bus.close()
