"""``meeple check``: run a conformance kit against someone's server or client.

::

    meeple check server twente 127.0.0.1:7777 --junit report.xml
    meeple check client clarkson --port 9000 --games 2

The exit status is 1 when any MUST check failed or no check could pass (nothing was
verified: no server, say), 2 on a usage error, 0 otherwise.
See docs/check.md.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any

__all__ = ["register"]

SERVER_PROTOCOLS = ("twente", "clarkson", "spectrangle", "santorini", "cmpn402", "web")
CLIENT_PROTOCOLS = ("twente", "clarkson", "spectrangle", "santorini", "cmpn402", "web")


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "check",
        help="conformance kits: test your own server or client against the specs",
        description="Run the spec's checks against a server, or grade a client.",
    )
    sides = p.add_subparsers(dest="side", required=True, metavar="SIDE")
    s = sides.add_parser("server", help="check a server listening at HOST:PORT")
    s.add_argument("protocol", choices=SERVER_PROTOCOLS)
    s.add_argument("address", metavar="HOST:PORT", help="cmpn402, web: a ws:// URL or HOST:PORT")
    s.add_argument("--wait", type=float, default=3.0, help="seconds to wait for each reply")
    s.add_argument(
        "--heartbeat",
        type=float,
        default=5.0,
        help="santorini: the server's heartbeat timeout in seconds (ERRATA: 5)",
    )
    s.add_argument(
        "--ping-interval",
        type=float,
        default=1.0,
        help="cmpn402: the referee's ping interval in seconds (ERRATA: 1)",
    )
    s.add_argument(
        "--fresh",
        metavar="COMMAND",
        help="a shell command that starts the server at HOST:PORT: started before each "
        "check, stopped after it (a server that hosts one game, then must restart)",
    )
    _common(s)
    s.set_defaults(handler=run_server)
    c = sides.add_parser("client", help="run a strict server and grade a client you connect")
    c.add_argument("protocol", choices=CLIENT_PROTOCOLS)
    c.add_argument("--host", default="127.0.0.1")
    c.add_argument("--port", type=int, default=0, help="where your client connects (0: any)")
    c.add_argument("--games", type=int, default=1, help="games your client plays (a bot: several)")
    c.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for the client in all"
    )
    c.add_argument(
        "--turn-wait",
        type=float,
        default=30.0,
        help="seconds the client may take over one turn before the kit stops waiting",
    )
    _common(c)
    c.set_defaults(handler=run_client)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON (- for stdout)")
    p.add_argument("--junit", metavar="FILE", help="also write the report as JUnit XML")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write one HTML page: the causes and every check's bytes (hex and text)",
    )
    p.add_argument("--only", action="append", default=[], metavar="ID", help="run these checks")
    from meeple.cli.options import add_lexicon_argument

    add_lexicon_argument(
        p,
        "the target's word list, which the kit's moves and unknown words come from"
        " (default %(default)s, as meeple serve's; a server on another list refuses the"
        " kit's words)",
    )


def _address(text: str) -> tuple[str, int] | None:
    if text.startswith(("ws://", "wss://")):
        from urllib.parse import urlsplit

        url = urlsplit(text)
        if url.hostname is None:
            return None
        try:
            return url.hostname, url.port or (443 if url.scheme == "wss" else 80)
        except ValueError:
            return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    return host.strip("[]"), int(port)


def _emit(args: argparse.Namespace, title: str, results: Sequence[Any]) -> int:
    from meeple.check.report import exit_status, to_html, to_json, to_junit, to_text

    if args.json == "-":
        print(to_json(title, results))
    else:
        print(to_text(title, results), end="")
        if args.json:
            Path(args.json).write_text(to_json(title, results) + "\n", encoding="utf-8")
    if args.junit:
        Path(args.junit).write_text(to_junit(title, results), encoding="utf-8")
    if args.html:
        Path(args.html).write_text(to_html(title, results), encoding="utf-8")
    return exit_status(results)


def _waiting(check: Any, seconds: float) -> None:
    """The progress line of a check that runs long (a whole game, a slow target)."""
    print(f"meeple check: {check.id} still running ({seconds:.0f} s)", file=sys.stderr, flush=True)


# A wait longer than this gets a line saying what the kit is doing.
PROGRESS_AFTER = 2.0


def _lexicon(name: str) -> Any:
    from meeple.games.scrabble.lexicon import LexiconError, load_lexicon

    # The first run compiles the word list (about a minute): say so rather than sit silent.
    timer = threading.Timer(
        PROGRESS_AFTER,
        lambda: print(
            f"meeple check: compiling the word list {name} (first run only; a minute or so)",
            file=sys.stderr,
            flush=True,
        ),
    )
    timer.daemon = True
    timer.start()
    try:
        return load_lexicon(name)
    except LexiconError as e:
        print(f"meeple check: {e}", file=sys.stderr)
        return None
    finally:
        timer.cancel()


def run_server(args: argparse.Namespace) -> int:
    from meeple.check import run_server_kit

    address = _address(args.address)
    if address is None:
        print(f"meeple check: not HOST:PORT: {args.address!r}", file=sys.stderr)
        return 2
    lexicon = _lexicon(args.lexicon)
    if lexicon is None:
        return 2
    host, port = address
    results = asyncio.run(
        run_server_kit(
            args.protocol,
            host,
            port,
            lexicon=lexicon,
            wait=args.wait,
            only=args.only,
            waiting=_waiting,
            fresh=args.fresh,
            options={
                "heartbeat": args.heartbeat,
                "ping_interval": args.ping_interval,
                "uri": args.address
                if "://" in args.address
                else f"ws://{host}:{port}/" + ("ws" if args.protocol == "web" else ""),
            },
        )
    )
    return _emit(args, f"meeple check server {args.protocol} {host}:{port}", results)


class _Stopped(Exception):
    """The run was stopped by a signal (its number): everything was cleaned up."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _run_until_signal(main: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(main)``, where SIGTERM and SIGINT cancel ``main`` instead of killing
    the process: its ``finally`` blocks run as at a normal end (the client kit stops its
    meeple server and removes its temporary database; SIGTERM used to leave it behind).
    :class:`_Stopped` then says which signal it was."""

    async def run() -> Any:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        got: list[int] = []

        def stop(signum: int) -> None:
            if not got:  # a second signal waits for the clean-up the first started
                got.append(signum)
                task.cancel()

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop, signum)
        try:
            return await main
        except asyncio.CancelledError:
            if got:
                raise _Stopped(got[0]) from None
            raise
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    return asyncio.run(run())


def run_client(args: argparse.Namespace) -> int:
    from meeple.check.clients import run_client_kit

    if args.games < 1:
        print("meeple check: --games must be at least 1", file=sys.stderr)
        return 2
    lexicon = _lexicon(args.lexicon)
    if lexicon is None:
        return 2

    def ready(host: str, port: int, how: str) -> None:
        print(f"meeple check: connect your client to {host}:{port} — {how}", flush=True)

    try:
        results = _run_until_signal(
            run_client_kit(
                args.protocol,
                args.host,
                args.port,
                lexicon=lexicon,
                games=args.games,
                timeout=args.timeout,
                turn_wait=args.turn_wait,
                ready=ready,
            )
        )
    except _Stopped as e:
        print(f"meeple check: stopped by {e} (no report)", file=sys.stderr)
        return 128 + e.signum
    return _emit(args, f"meeple check client {args.protocol}", results)
