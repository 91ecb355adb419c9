"""Scrabble preview benchmark: ``python benchmarks/web_preview.py``.

What one browser ``preview`` (issue 13) costs the server, without the network: the
session decoding the message (size limit, shape checks, state table), the rate
limit, the engine's verdict (``games/scrabble/view.preview``: ``Game.validate`` on
the seat's game, never applied) and the reply's JSON. Measured on a mid-game
position (a greedy self-play game on the gcide lexicon stopped after ``--moves``
moves) for the AI's best play, the legal play with the most tiles, and a play the
rules refuse; best of
``--runs`` runs of ``--number`` previews each. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

from meeple.ai.scrabble import ranked_moves
from meeple.games.scrabble.game import TWENTE_VARIANT, Game, Play
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.tiles import ENGLISH
from meeple.games.scrabble.view import preview
from meeple.protocols.web import PROTOCOL, Preview, PreviewReply, RateLimit, ServerSession


def _position(moves: int, lexicon: Lexicon) -> Game:
    game = Game(["ann", "bob"], random.Random(7), variant=TWENTE_VARIANT, lexicon=lexicon)
    for _ in range(moves):
        player = game.turn
        assert player is not None
        best = ranked_moves(game.board, game.rack(player), lexicon, ENGLISH)
        if not best:
            break
        game.apply(Play(player, best[0].tiles))
    return game


def _one(session: ServerSession, game: Game, text: str) -> str:
    request = session.receive(text)
    message = request.message
    assert isinstance(message, Preview)
    assert session.preview_refusal(0.0) is None
    tiles = tuple(Placement(y=y, x=x, tile=t) for x, y, t in message.tiles)
    result = preview(game, game.turn or 0, tiles)
    return PreviewReply(message.id, tuple(result.items())).encode()


def _time(fn: Callable[[], object], number: int, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=8)
    parser.add_argument("--number", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    lexicon = load_lexicon("gcide")
    game = _position(args.moves, lexicon)
    player = game.turn or 0
    ranked = ranked_moves(game.board, game.rack(player), lexicon, ENGLISH)
    best, longest = ranked[0], max(ranked, key=lambda m: len(m.tiles))
    rack = game.rack(player).replace("?", "") or "A"
    cases = {
        f"best play ({len(best.tiles)} tiles)": [[p.x, p.y, p.tile] for p in best.tiles],
        f"most tiles ({len(longest.tiles)} tiles)": [[p.x, p.y, p.tile] for p in longest.tiles],
        "refused (not connected)": [[0, 0, rack[0]], [1, 0, rack[-1]]],
    }
    session = ServerSession()
    session.receive(json.dumps({"type": "hello", "protocol": PROTOCOL}))
    session.seated()
    session.previews = RateLimit(rate=1e12, burst=10**9)  # measure the work, not the limit
    print(f"position after {args.moves} moves; best of {args.runs} x {args.number}")
    for name, tiles in cases.items():
        text = json.dumps({"type": "preview", "id": 1, "action": {"kind": "place", "tiles": tiles}})
        reply = json.loads(_one(session, game, text))
        verdict = reply.get("refusal") or f"{reply['score']} points"
        per = _time(lambda t=text: _one(session, game, t), args.number, args.runs)
        print(f"  {name:<40} {per * 1e6:8.1f} µs   ({verdict})")


if __name__ == "__main__":
    main()
