"""``meeple cmpn402 ACTION``: the referee's admin buttons from a shell.

A thin client of the admin endpoint (see ``docs/protocols/cmpn402.md``): ``status`` and
``standings`` are GETs, every action that changes something is a POST, all with the
token in ``Authorization: Bearer``. Prints the JSON answer; ``standings`` prints a table.
``secrets --name A --name B …`` asks no referee: it prints a ``name#secret`` line per agent
for the referee's ``--agent-secrets`` file (docs/protocols/cmpn402.md, "What protects a
seat").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from meeple.server.config import DEFAULT_PORTS
from meeple.server.rooms.cmpn402_names import AgentSecrets, SecretsError

__all__ = ["register"]

READS = ("status", "standings")
ACTIONS = ("start", "pause", "resume", "stop", "swap", "abort", "withdraw")


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "cmpn402",
        help="admin controls of a running CMPN402 referee or contest",
        description=(
            "Press the CMPN402 referee's buttons: status, standings, start, pause, resume, "
            "stop, swap; in a contest also abort, and withdraw --name AGENT. "
            "secrets --name A --name B ... prints a name#secret line per agent for the "
            "referee's --agent-secrets file."
        ),
    )
    p.add_argument("action", choices=(*READS, *ACTIONS, "secrets"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=DEFAULT_PORTS["cmpn402"])
    p.add_argument(
        "--name",
        action="append",
        help="the agent to withdraw (withdraw); each agent to make a secret for (secrets)",
    )
    p.add_argument(
        "--game",
        metavar="UID",
        help="on a cluster's edge: the game to stop, pause or resume (with one game "
        "running it may be left out)",
    )
    p.add_argument(
        "--token",
        default=os.environ.get("MEEPLE_CMPN402_TOKEN"),
        help="admin token (default: $MEEPLE_CMPN402_TOKEN)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    names: list[str] = args.name or []
    if args.action == "secrets":
        try:
            made = AgentSecrets.generate(names)
        except SecretsError as e:
            print(f"meeple cmpn402 secrets: {e}", file=sys.stderr)
            return 2
        sys.stdout.write(made.lines())
        return 0
    if not args.token:
        print("meeple cmpn402: give --token or set MEEPLE_CMPN402_TOKEN", file=sys.stderr)
        return 2
    if (args.action == "withdraw") != bool(names) or len(names) > 1:
        print(
            "meeple cmpn402: one --name goes with withdraw, and withdraw needs it", file=sys.stderr
        )
        return 2
    url = f"http://{args.host}:{args.port}/admin/{args.action}"
    name = names[0] if names else None
    params = {k: v for k, v in (("name", name), ("game", args.game)) if v is not None}
    if params:
        url += "?" + urllib.parse.urlencode(params)
    request = urllib.request.Request(
        url,
        method="GET" if args.action in READS else "POST",
        headers={"Authorization": f"Bearer {args.token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as e:
        reason = e.reason
        with contextlib.suppress(OSError, ValueError, AttributeError):
            reason = json.loads(e.read()).get("error", reason)
        print(f"meeple cmpn402: {e.code} {reason}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"meeple cmpn402: {e}", file=sys.stderr)
        return 1
    if args.action == "standings":
        print(format_standings(body.get("standings", [])))
    else:
        print(json.dumps(body, indent=2))
    return 0


def format_standings(rows: list[dict[str, Any]]) -> str:
    """The standings as a text table, best first."""
    lines = [
        f"{'#':>3}  {'agent':<24} {'W':>3} {'D':>3} {'L':>3} "
        f"{'points':>7} {'spread':>7} {'left':>5}"
    ]
    for i, r in enumerate(rows, 1):
        lines.append(
            f"{i:>3}  {str(r['name'])[:24]:<24} {r['wins']:>3} {r['draws']:>3} {r['losses']:>3} "
            f"{r['points']:>7} {r['spread']:>+7} {r['games_left']:>5}"
        )
    return "\n".join(lines)
