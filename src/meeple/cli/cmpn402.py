"""``meeple cmpn402 status|start|pause|stop``: the referee's admin buttons from a shell.

A thin client of the admin endpoint (``GET /admin/<action>`` with a bearer token, see
``docs/protocols/cmpn402.md``); prints the JSON answer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from meeple.server.config import DEFAULT_PORTS

__all__ = ["register"]

ACTIONS = ("status", "start", "pause", "stop")


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "cmpn402",
        help="admin controls of a running CMPN402 referee",
        description="Press the CMPN402 referee's buttons: status, start, pause, stop.",
    )
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=DEFAULT_PORTS["cmpn402"])
    p.add_argument(
        "--token",
        default=os.environ.get("MEEPLE_CMPN402_TOKEN"),
        help="admin token (default: $MEEPLE_CMPN402_TOKEN)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not args.token:
        print("meeple cmpn402: give --token or set MEEPLE_CMPN402_TOKEN", file=sys.stderr)
        return 2
    request = urllib.request.Request(
        f"http://{args.host}:{args.port}/admin/{args.action}",
        headers={"Authorization": f"Bearer {args.token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as e:
        print(f"meeple cmpn402: {e.code} {e.reason}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"meeple cmpn402: {e}", file=sys.stderr)
        return 1
    print(json.dumps(body, indent=2))
    return 0
