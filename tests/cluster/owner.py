"""A room owner in a process of its own, for the SIGSTOP test (tests/cluster/test_takeover.py):
``python -m tests.cluster.owner --url ... --ns ... --uid ... --name ...``.

It waits for the room's lease, claims the room's log with the lease's epoch, keeps the
lease renewed and appends an entry every 50 ms, printing ``claimed EPOCH N`` (N entries
replayed), ``appended SEQ`` after each acknowledged append and ``lost`` when a renewal
finds the lease gone. It keeps appending whatever its lease does: the log's fence, not
the owner's belief, must stop it. The first refused append prints ``refused SEQ`` and
ends the process with status 3. With ``--hold`` it waits for a line on stdin between
its claim and its first append."""

from __future__ import annotations

import argparse
import asyncio
import sys

from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane, connect_node
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.server.store.database import LogConflict, Store

REFUSED = 3


async def main(args: argparse.Namespace) -> int:
    ns = Namespace(args.ns)
    nc = await connect_node(args.url, ns, user=args.user, password=args.password, name=args.name)
    leases = Leases(JetStreamBackplane(nc), ns, ttl=args.ttl)
    log = JetStreamLog(JetStreamBackplane(nc), ns, Store(args.records))
    while (lease := await leases.acquire(room_key(args.uid), args.name)) is None:
        await asyncio.sleep(0.05)
    replay = await log.claim(args.uid, args.name, lease.epoch)
    print(f"claimed {lease.epoch} {len(replay.entries)}", flush=True)
    leases.keep(lease, lambda _: print("lost", flush=True))
    if args.hold:
        # Wait for a line on stdin before the first append (the test's go).
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    seq = len(replay.entries)
    while True:
        await asyncio.sleep(0.05)
        seq += 1
        try:
            await log.append_log(args.uid, seq, {"action": {"by": args.name, "n": seq}})
        except LogConflict:
            print(f"refused {seq}", flush=True)
            return REFUSED
        print(f"appended {seq}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for name in ("url", "user", "password", "ns", "uid", "name", "records"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--ttl", type=int, default=1)
    parser.add_argument("--hold", action="store_true", help="append after a line on stdin")
    sys.exit(asyncio.run(main(parser.parse_args())))
