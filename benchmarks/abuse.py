"""Hostile load on a real ``meeple serve`` (issue 22): the web lobby's latency while
attackers flood, hold and starve the server.

Run: ``.venv/bin/python benchmarks/abuse.py`` (all four phases), or choose with
``--phases a,b,c,d`` and ``--seconds 20`` (length of each flood / hold).

The server is a ``meeple serve`` process with every listener on a free port, its log
(stderr, INFO) written to a file. The attackers run in another process; this one only
measures: a lobby ``GET /`` on the web port every 50 ms over a new connection (from
127.0.0.1; the attackers come from other loopback addresses, 127.0.0.2 and up, as
attackers from elsewhere would), its p50 / p99 / max, and the growth of the log.

- (a) one connection floods each listener in turn with cheap refused messages (Twente
  ``X␞``, Clarkson ``xyzzy``, AM27 and Spectrangle ``x``, CMPN402 one byte, the
  browser's ``/ws`` previews) as fast as loopback takes them; when the server closes it,
  the attacker connects again at once and goes on (``--no-reconnect``: one connection).
- (b) 2,000 idle connections and 500 slowloris ones (a header line a second, never the
  end) on the web port, each reopened when the server closes it; how many the server
  still held at the end.
- (c) the server under ``RLIMIT_NOFILE`` 1024 (soft and hard, as ``ulimit -n 1024``) and
  1,100 idle connections on the web port, reopened when closed; then whether every
  listener still takes a new client and answers it, and the ``EMFILE`` lines in the log.
- (d) issue 30.2: four AM27 connections write a Java object stream (the header, then
  per message TC_RESET and a string: a MOVE out of turn, answered INFO WAIT), 20,000
  messages a second each, reading their replies; each reconnects at once when closed
  (``--no-reconnect``: one connection each).

Goals (issue 22): p99 < 200 ms in (a) and (b); every listener accepts in (c); the log
grows by less than 1 MB a minute in (a). Issue 30.2: the lobby's latency under (d) was
18.4 s at most before the object stream was counted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LISTENERS = ("twente", "clarkson", "cmpn402", "santorini", "spectrangle", "web")
_LISTENING = re.compile(r"(\w+):? listening on (?:http://)?127\.0\.0\.1:(\d+)")
FLOODS: dict[str, tuple[bytes, bytes]] = {  # greeting, one refused message
    "twente": (b"", b"X\x1e"),
    "clarkson": (b"HELLO 1.0.1,Linux,Python,abuse\r\n", b"xyzzy\r\n"),
    "santorini": (b"", b"x\n"),
    "spectrangle": (b"", b"x\n"),
}


class Serve:
    """``meeple serve`` in its own process, every port 0, its log in a file."""

    def __init__(self, tmp: Path, nofile: int | None = None) -> None:
        self.log_path = tmp / "server.log"
        args = [sys.executable, "-m", "meeple", "serve", "--database", str(tmp / "db.sqlite3")]
        for name in LISTENERS:
            args += [f"--{name}-port", "0"]

        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(args, stderr=self._log, preexec_fn=limit)
        self.ports: dict[str, int] = {}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and set(self.ports) < set(LISTENERS):
            time.sleep(0.2)
            for match in _LISTENING.finditer(self.log_path.read_text(errors="replace")):
                self.ports[match.group(1)] = int(match.group(2))
            if self.proc.poll() is not None:
                break
        if set(self.ports) < set(LISTENERS):
            self.stop()
            raise SystemExit("the server did not start:\n" + self.log_path.read_text()[-3000:])

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


# --- the measurement: lobby GETs ---------------------------------------------------------


async def get_lobby(port: int, timeout: float = 30.0) -> float:
    """Seconds for a whole ``GET /`` over a new connection (``timeout`` if it failed)."""
    start = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            # The Host with the port: the web answers only its own names (issue 30.7).
            host = f"127.0.0.1:{port}".encode()
            writer.write(b"GET / HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            body = await reader.read()
            writer.close()
            if not body.startswith(b"HTTP/1.1 200"):
                return timeout
    except (TimeoutError, OSError):
        return timeout
    return time.perf_counter() - start


async def probe(port: int, seconds: float) -> list[float]:
    """Lobby GETs every 50 ms for ``seconds``; their latencies."""
    latencies: list[float] = []
    tasks: list[asyncio.Task[float]] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        tasks.append(asyncio.create_task(get_lobby(port)))
        await asyncio.sleep(0.05)
    latencies = list(await asyncio.gather(*tasks))
    return latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summary(latencies: list[float]) -> str:
    return (
        f"lobby GET p50 {percentile(latencies, 0.5) * 1e3:7.1f} ms"
        f"  p99 {percentile(latencies, 0.99) * 1e3:7.1f} ms"
        f"  max {max(latencies) * 1e3:7.1f} ms  ({len(latencies)} GETs)"
    )


# --- the attackers (another process) --------------------------------------------------


def _source(i: int) -> str:
    """Attacker source addresses: 127.0.0.2 and up (never the prober's 127.0.0.1)."""
    return f"127.0.{2 + i // 250}.{2 + i % 250}"


async def _flood_tcp(
    port: int,
    greeting: bytes,
    chunk: bytes,
    stop: float,
    once: bool,
    *,
    source: int = 0,
    pace: float | None = None,
) -> int:
    """One flooder: connect from ``_source(source)``, send ``greeting``, then ``chunk``
    after ``chunk`` (one every ``pace`` seconds, or as fast as the socket takes them),
    reading the replies; reconnects when closed unless ``once``. How many connections
    it made."""
    connections = 0
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(_source(source), 0)
            )
        except OSError:
            await asyncio.sleep(0.01)
            continue
        connections += 1

        async def drain(r: asyncio.StreamReader = reader) -> None:
            with contextlib.suppress(OSError):
                while await r.read(65536):
                    pass

        reading = asyncio.create_task(drain())
        try:
            writer.write(greeting)
            tick = time.monotonic()
            while time.monotonic() < stop and not reading.done():
                writer.write(chunk)
                await writer.drain()
                if pace is not None:
                    tick += pace
                    await asyncio.sleep(max(0.0, tick - time.monotonic()))
        except OSError:
            pass
        writer.close()
        reading.cancel()
        if once:
            break
    return connections


async def _flood_ws(
    url: str, first: str | None, message: str | bytes, stop: float, once: bool
) -> int:
    import websockets

    connections = 0
    while time.monotonic() < stop:
        try:
            ws = await websockets.connect(url, max_size=2**22)
        except (OSError, websockets.InvalidHandshake):
            await asyncio.sleep(0.01)
            continue
        connections += 1

        async def drain(ws: Any = ws) -> None:
            with contextlib.suppress(websockets.ConnectionClosed):
                async for _ in ws:
                    pass

        reading = asyncio.create_task(drain())
        try:
            if first is not None:
                await ws.send(first)
            while time.monotonic() < stop and not reading.done():
                for _ in range(100):
                    await ws.send(message)
                await asyncio.sleep(0)
        except websockets.ConnectionClosed:
            pass
        await ws.close()
        reading.cancel()
        if once:
            break
    return connections


# One AM27 message as a Java ObjectOutputStream writes it after reset(): TC_RESET,
# TC_STRING, u16 length, the text; a MOVE before any game (INFO WAIT back).
_MOVE = b'{"type":"MOVE","message":"{}"}'
OBJECT_MESSAGE = b"\x79\x74" + len(_MOVE).to_bytes(2, "big") + _MOVE
OBJECT_HEADER = b"\xac\xed\x00\x05"


async def _flood_objects(port: int, i: int, rate: float, stop: float, once: bool) -> int:
    """One object-stream flooder at ``rate`` messages a second (in 50 ms slices), reading
    its replies; reconnects when closed unless ``once``. How many connections it made."""
    slice_ = OBJECT_MESSAGE * max(1, int(rate * 0.05))
    return await _flood_tcp(port, OBJECT_HEADER, slice_, stop, once, source=i, pace=0.05)


def objects_process(port: int, floods: int, seconds: float, once: bool, out: Any) -> None:
    async def run() -> int:
        stop = time.monotonic() + seconds
        made = await asyncio.gather(
            *(_flood_objects(port, i, 20_000, stop, once) for i in range(floods))
        )
        return sum(made)

    out.put(asyncio.run(run()))


def flood_process(listener: str, port: int, seconds: float, once: bool, out: Any) -> None:
    async def run() -> int:
        stop = time.monotonic() + seconds
        if listener == "web":
            hello = json.dumps({"type": "hello", "protocol": "meeple-web/1"})
            preview = json.dumps({"type": "preview", "tiles": [[7, 7, "a"]], "id": 1})
            return await _flood_ws(f"ws://127.0.0.1:{port}/ws", hello, preview, stop, once)
        if listener == "cmpn402":
            return await _flood_ws(f"ws://127.0.0.1:{port}/", None, b"\x05", stop, once)
        greeting, message = FLOODS[listener]
        block = message * (65536 // len(message))
        return await _flood_tcp(port, greeting, block, stop, once)

    out.put(asyncio.run(run()))


def hold_process(port: int, idle: int, slow: int, seconds: float, out: Any) -> None:
    """``idle`` silent and ``slow`` slowloris connections, each reopened when closed; at
    the end: how many of each were open, how many were opened in all, and the longest
    time the server held any one of them."""
    longest = [0.0]

    async def one(i: int, slowloris: bool, stop: float, held: list[int], opened: list[int]) -> None:
        while time.monotonic() < stop:
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", port, local_addr=(_source(1 + i // 50), 0)
                )
            except OSError:
                await asyncio.sleep(0.5)
                continue
            opened[0] += 1
            held[0] += 1
            since = time.monotonic()
            try:
                if slowloris:
                    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
                n = 0
                while time.monotonic() < stop:
                    if slowloris:
                        writer.write(b"X-%d: y\r\n" % n)
                        n += 1
                    with contextlib.suppress(TimeoutError):
                        if not await asyncio.wait_for(reader.read(4096), 1.0):
                            break  # closed by the server
            except OSError:
                pass
            finally:
                held[0] -= 1
                longest[0] = max(longest[0], time.monotonic() - since)
                writer.close()
        return

    async def run() -> tuple[int, int, int, int, float]:
        stop = time.monotonic() + seconds
        held_idle, held_slow, opened_idle, opened_slow = [0], [0], [0], [0]
        tasks = [
            asyncio.create_task(one(i, False, stop, held_idle, opened_idle)) for i in range(idle)
        ]
        tasks += [
            asyncio.create_task(one(idle + i, True, stop, held_slow, opened_slow))
            for i in range(slow)
        ]
        await asyncio.sleep(seconds - 0.5)
        counts = (held_idle[0], held_slow[0], opened_idle[0], opened_slow[0])
        await asyncio.gather(*tasks, return_exceptions=True)
        return (*counts, longest[0])

    out.put(asyncio.run(run()))


# --- can each listener still take a client? -------------------------------------------------


async def answers(listener: str, port: int) -> bool:
    """A new client of ``listener`` connects and hears something back within 5 s."""
    try:
        async with asyncio.timeout(5):
            if listener == "cmpn402":
                import websockets

                ws = await websockets.connect(f"ws://127.0.0.1:{port}/")
                await ws.close()
                return True
            if listener == "web":
                return await get_lobby(port, 5) < 5
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            greeting, message = FLOODS[listener]
            writer.write(greeting + message)
            data = await reader.read(1)
            writer.close()
            return bool(data)
    except (TimeoutError, OSError, Exception):
        return False


# --- phases -------------------------------------------------------------------------------


def phase_a(seconds: float, once: bool, listeners: tuple[str, ...] = LISTENERS) -> None:
    print(
        f"(a) one connection floods each listener in turn, {seconds:.0f} s each"
        f"{' (no reconnecting)' if once else ', reconnecting when closed'}"
    )
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        server = Serve(Path(tmp))
        try:
            base = asyncio.run(probe(server.ports["web"], 3))
            print(f"  {'(quiet)':12s} {summary(base)}")
            for listener in listeners:
                out: Any = ctx.Queue()
                before = server.log_size()
                attacker = ctx.Process(
                    target=flood_process,
                    args=(listener, server.ports[listener], seconds, once, out),
                )
                attacker.start()
                time.sleep(0.5)
                started = time.monotonic()
                latencies = asyncio.run(probe(server.ports["web"], seconds - 1))
                attacker.join(seconds + 30)
                connections = out.get(timeout=5) if not out.empty() else -1
                took = time.monotonic() - started + 0.5
                grew = (server.log_size() - before) / took * 60 / 1e6
                print(
                    f"  {listener:12s} {summary(latencies)}  log +{grew:.3f} MB/min"
                    f"  ({connections} flood connections)",
                    flush=True,
                )
        finally:
            server.stop()


def phase_b(seconds: float) -> None:
    print(f"(b) 2,000 idle + 500 slowloris connections on the web port for {seconds:.0f} s")
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        server = Serve(Path(tmp))
        try:
            out: Any = ctx.Queue()
            holder = ctx.Process(
                target=hold_process, args=(server.ports["web"], 2000, 500, seconds, out)
            )
            holder.start()
            time.sleep(2)
            latencies = asyncio.run(probe(server.ports["web"], seconds - 4))
            holder.join(seconds + 60)
            idle, slow, opened_idle, opened_slow, longest = out.get(timeout=5)
            print(f"  {summary(latencies)}")
            print(
                f"  open at the end: {idle} idle, {slow} slowloris; opened in all:"
                f" {opened_idle} idle, {opened_slow} slowloris; the longest any was held:"
                f" {longest:.1f} s (header timeout 10 s)"
            )
        finally:
            server.stop()


def phase_c(seconds: float) -> None:
    print(f"(c) RLIMIT_NOFILE 1024 and 1,100 idle connections on the web port ({seconds:.0f} s)")
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        server = Serve(Path(tmp), nofile=1024)
        try:
            out: Any = ctx.Queue()
            holder = ctx.Process(
                target=hold_process, args=(server.ports["web"], 1100, 0, seconds, out)
            )
            holder.start()
            time.sleep(3)

            async def check() -> tuple[list[float], dict[str, bool]]:
                probing = asyncio.create_task(probe(server.ports["web"], seconds - 6))
                await asyncio.sleep(2)
                accepted = {name: await answers(name, server.ports[name]) for name in LISTENERS}
                return await probing, accepted

            latencies, accepted = asyncio.run(check())
            holder.join(seconds + 60)
            idle, _, opened, _, _ = out.get(timeout=5)
            log = server.log_text()
            emfile = log.count("Too many open files")
            print(f"  {summary(latencies)}")
            print(
                "  new client answered: "
                + ", ".join(f"{n} {'yes' if ok else 'NO'}" for n, ok in accepted.items())
            )
            print(
                f"  idle connections held at the end: {idle} (opened {opened}); "
                f"log lines naming EMFILE: {emfile}; log {len(log.encode()) / 1e3:.0f} kB"
            )
        finally:
            server.stop()


def phase_d(seconds: float, once: bool) -> None:
    print(
        f"(d) four AM27 object-stream floods, 20,000 messages a second each, {seconds:.0f} s"
        f"{' (no reconnecting)' if once else ', reconnecting when closed'}"
    )
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        server = Serve(Path(tmp))
        try:
            base = asyncio.run(probe(server.ports["web"], 3))
            print(f"  {'(quiet)':12s} {summary(base)}")
            out: Any = ctx.Queue()
            before = server.log_size()
            attacker = ctx.Process(
                target=objects_process,
                args=(server.ports["santorini"], 4, seconds, once, out),
            )
            attacker.start()
            time.sleep(0.5)
            started = time.monotonic()
            latencies = asyncio.run(probe(server.ports["web"], seconds - 1))
            attacker.join(seconds + 60)
            connections = out.get(timeout=5) if not out.empty() else -1
            took = time.monotonic() - started + 0.5
            grew = (server.log_size() - before) / took * 60 / 1e6
        finally:
            server.stop()
        # Closes are counted in the server's churn lines (one a minute and one at its
        # stop: issue 30.7), e.g. "3 closed (3 message flood: past the hard rate limit)".
        closed = sum(
            int(n) for n in re.findall(r"(\d+) [^,()]*past the hard rate limit", server.log_text())
        )
        print(
            f"  {'santorini×4':12s} {summary(latencies)}  log +{grew:.3f} MB/min"
            f"  ({connections} flood connections, {closed} closed past the hard limit)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", default="a,b,c,d")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--no-reconnect", action="store_true", help="(a), (d): no new connection once closed"
    )
    parser.add_argument("--listeners", default=",".join(LISTENERS), help="(a): these only")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    phases = args.phases.split(",")
    if "a" in phases:
        phase_a(args.seconds, args.no_reconnect, tuple(args.listeners.split(",")))
    if "b" in phases:
        phase_b(args.seconds)
    if "c" in phases:
        phase_c(args.seconds)
    if "d" in phases:
        phase_d(args.seconds, args.no_reconnect)


if __name__ == "__main__":
    main()
