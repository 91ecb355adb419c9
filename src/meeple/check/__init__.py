"""``meeple check``: conformance kits for teams who write their own servers and clients.

- :mod:`.core`: a check (spec section, MUST/SHOULD, scenario, timeout), its result,
  the runner and shared fixtures;
- :mod:`.wire`: a recorded TCP connection cut into messages, every wait bounded;
- :mod:`.report`: the one-screen summary (root causes first), HTML with every
  transcript, JSON, JUnit XML, the exit status;
- one module per protocol (:mod:`.twente`, :mod:`.clarkson`, :mod:`.spectrangle`)
  holding its server checks, and :mod:`.clients` the client kits (a relay in front of a
  real meeple server, through which the kit grades what the client sends).

See ``docs/check.md``.
"""

from __future__ import annotations

import importlib
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from meeple.check.core import Check, Level, Probe, Result, Status, Target, run_checks

__all__ = [
    "SERVER_KITS",
    "Check",
    "Level",
    "Result",
    "Status",
    "Target",
    "probe",
    "run_server_kit",
    "server_checks",
]

# Protocol name -> module holding its SERVER_CHECKS (a registry, as cli/main.py does).
SERVER_KITS: dict[str, str] = {
    "twente": "meeple.check.twente",
    "clarkson": "meeple.check.clarkson",
    "spectrangle": "meeple.check.spectrangle",
    "santorini": "meeple.check.santorini",
    "cmpn402": "meeple.check.cmpn402",
    "web": "meeple.check.web",
}


def probe(protocol: str, target: Target) -> Probe:
    """What a new client of ``protocol`` does first, to ask whether the server still
    answers (:class:`~meeple.check.core.Probe`), and what it adds for a quiet server: AM27
    and Clarkson servers speak first (nudged with a PING, or an unknown command the RFC
    answers NOK); a Twente client ANNOUNCEs (nudged with a line end, which the ERRATA
    asks servers to accept after RS), a Spectrangle one says connect (each with a name of
    the run's prefix); the WebSocket protocols' clients open with the HTTP handshake.
    Once a server has answered only the nudge, the runner's probes send it with the
    first words, so that no probe waits out a silence the run already knows of."""
    name = f"{target.options.get('prefix', 'ckprobe')}pr"
    if protocol == "twente":
        return Probe(f"ANNOUNCE\x1f{name}\x1e".encode(), b"\n")
    if protocol == "spectrangle":
        return Probe(f"connect {name}\n".encode(), b"\r\n")
    if protocol == "clarkson":
        return Probe(b"", b"FOOBAR\r\n")
    if protocol == "santorini":
        return Probe(b"", b'{"type":"PING","message":"{\\"message\\":\\"AIping\\"}"}\n')
    uri = str(target.options.get("uri", f"ws://{target.host}:{target.port}/"))
    path = "/" + uri.split("://", 1)[-1].partition("/")[2]
    return Probe(
        (
            f"GET {path} HTTP/1.1\r\nHost: {target.host}:{target.port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )


def server_checks(protocol: str) -> list[Check]:
    checks: list[Check] = importlib.import_module(SERVER_KITS[protocol]).SERVER_CHECKS
    return checks


async def run_server_kit(
    protocol: str,
    host: str,
    port: int,
    *,
    lexicon: Any,
    wait: float = 3.0,
    only: Sequence[str] = (),
    progress: Callable[[Result], None] | None = None,
    options: dict[str, Any] | None = None,
    waiting: Callable[[Check, float], None] | None = None,
    fresh: str | None = None,
) -> list[Result]:
    """Run every server check of ``protocol`` against ``host:port``; the results in order.

    Player names start with a random prefix, so two runs against one server never clash.
    ``options`` are the kit's knobs (AM27: ``heartbeat``, the target's timeout in seconds).
    ``fresh``: a command that starts the target, run afresh for each check and stopped
    after it (:mod:`meeple.check.fresh`: a server that hosts one game, then must restart).
    """
    prefix = "ck" + "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(4))
    target = Target(host, port, {"lexicon": lexicon, "prefix": prefix, **(options or {})})
    if fresh:
        from meeple.check.fresh import Fresh, run_fresh

        return await run_fresh(
            server_checks(protocol),
            target,
            Fresh(fresh),
            wait=wait,
            only=only,
            progress=progress,
            waiting=waiting,
            probe=probe(protocol, target),
        )
    return await run_checks(
        server_checks(protocol),
        target,
        wait=wait,
        only=only,
        progress=progress,
        waiting=waiting,
        probe=probe(protocol, target),
    )
