"""The compiled core searches without the GIL: a thinking bot does not stall its server.

Not a timing test (the machine's load makes any lag figure noise): another thread takes
the GIL and runs Python *while* the core's search is in progress, which it can only do
if the search let the GIL go. It sees that by the search context's own state: the core
refuses to be cleared while it searches (``RuntimeError``), so a ``clear()`` from
another thread that is refused happened during a search. With a search that held the
GIL, the other thread would only ever run before the search began or after it ended.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from tests.patience import PATIENCE

from meeple.ai.santorini_native import NativeSearch, core_module
from meeple.ai.santorini_positions import random_position
from meeple.ai.santorini_search import PLAY_SELECTIVE
from meeple.ai.santorini_twin import GodTwin
from meeple.games.santorini import Phase

mod = core_module()
pytestmark = pytest.mark.skipif(
    mod is None, reason="the compiled Santorini core is not built (MEEPLE_NO_NATIVE set?)"
)


def _seen_searching(search: Callable[[NativeSearch], Any], until: Callable[[], None]) -> bool:
    """Run ``search`` on a fresh context in a thread; from this thread, try to clear
    the context until that is refused (the search is in progress and this thread holds
    the GIL) or the search has ended. Then ``until()`` (ends the search) and join."""
    assert mod is not None
    context = NativeSearch(mod)
    started = threading.Event()
    out: list[Any] = []

    def run() -> None:
        started.set()
        out.append(search(context))

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(PATIENCE)
    seen = False
    deadline = time.monotonic() + PATIENCE
    while worker.is_alive() and time.monotonic() < deadline:
        try:
            context._core.clear()
        except RuntimeError:
            seen = True
            break
    until()
    worker.join(PATIENCE)
    assert not worker.is_alive()
    assert out
    assert out[0] is not None
    assert out[0].steps
    return seen


def _node() -> tuple[GodTwin, Any]:
    s = random_position(random.Random(7), plies=0)
    assert s.phase is Phase.PLAY
    twin = GodTwin(s.gods)
    return twin, twin.node(s)


def _searcher(twin: GodTwin, node: Any, **limits: Any) -> Callable[[NativeSearch], Any]:
    """A core search of ``node`` to depth 60 at play's selectivity, within ``limits``
    (``max_nodes``, ``clock``, ``seconds``)."""

    def search(context: NativeSearch) -> Any:
        return context.search(
            twin, node, _weights(), None, max_depth=60, selective=PLAY_SELECTIVE, **limits
        )

    return search


def test_a_search_on_the_monotonic_clock_lets_other_threads_run() -> None:
    """The server's bots pass ``time.monotonic``: the core reads that clock itself and
    takes the GIL back only to answer."""
    twin, node = _node()

    search = _searcher(twin, node, max_nodes=None, clock=time.monotonic, seconds=1.0)

    assert _seen_searching(search, lambda: None)


def test_a_search_bounded_by_nodes_lets_other_threads_run() -> None:
    twin, node = _node()

    search = _searcher(twin, node, max_nodes=1_500_000, clock=None, seconds=None)

    assert _seen_searching(search, lambda: None)


def test_on_the_monotonic_clock_the_core_never_calls_back_into_python() -> None:
    """Told its clock is ``CLOCK_MONOTONIC``, the core reads that clock itself at the
    start, every few hundred nodes and between iterations: the callable is never
    called, so the GIL is not taken back until the answer (it was, twice an
    iteration, before)."""
    assert mod is not None
    twin, node = _node()
    _k, h, wk, turn, _w, mu = node
    calls = [0]

    def counted() -> float:
        calls[0] += 1
        return time.monotonic()

    steps, _ended, _value, depth, nodes, iterations = mod.Core(16).search(
        h,
        wk,
        turn,
        mu,
        (0, 0),
        twin.zgods,
        _weights(),
        None,
        max_depth=60,
        clock=counted,
        seconds=0.3,
        monotonic=True,
        selective=PLAY_SELECTIVE,
    )
    assert steps
    assert depth >= 1
    assert nodes > 0
    assert [d for d, _v in iterations] == list(range(1, depth + 1))
    assert calls[0] == 0


def test_a_search_on_an_injected_clock_stops_when_it_says_so() -> None:
    """An injected clock is called with the GIL taken back, every few hundred nodes
    (calling Python lets other threads run in any case). The clock stands still until
    this thread has seen the search in progress, then jumps past the deadline: the
    search stops there."""
    twin, node = _node()
    now = [0.0]

    # max_nodes: a bound should the clock never move.
    search = _searcher(twin, node, max_nodes=50_000_000, clock=lambda: now[0], seconds=1.0)

    def stop() -> None:
        now[0] = 10.0

    assert _seen_searching(search, stop)


def _weights() -> tuple[int, ...]:
    from meeple.ai.santorini_eval import play_weights

    return tuple(play_weights().weights)
