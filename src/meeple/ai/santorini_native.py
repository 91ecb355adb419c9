"""The compiled Santorini search core (``_santorini_core.c``), when it is built.

:func:`core_module` imports :mod:`meeple.ai._santorini_core` once, hands it the god
twin's Zobrist keys (so its keys are the twin's) and logs once whether the compiled
search is in use; without it (no C compiler at install, ``MEEPLE_NO_NATIVE=1``)
meeple plays with the pure-Python search (:mod:`meeple.ai.santorini_search`), the
same game at fewer nodes a second.

:class:`NativeSearch` is one search context (its transposition table, killers and
history live across the turns of a game, as the Python search's table does): its
:meth:`~NativeSearch.search` takes a position the god twin covers (two players, no gods
or any gods of :data:`~meeple.games.santorini.gods.GODS`, a turn's start) and returns
the turn as the twin's steps. ``tests/ai/test_santorini_core.py`` proves that the core
generates the twin's turns, keys and results, evaluates as
:mod:`meeple.ai.santorini_eval` does, and finds the Python search's value at a fixed
depth.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from meeple.ai.santorini_net import NetWeights
from meeple.ai.santorini_twin import Z_ATHENA_UP, Z_CODE, Z_TURN, Z_WORKER, GodTwin, TwinMove

__all__ = [
    "SELECTIVE",
    "CoreBusy",
    "CoreResult",
    "NativeSearch",
    "core_children",
    "core_module",
    "god_indices",
    "native_net",
]

logger = logging.getLogger(__name__)


def _reads_clock_monotonic(clock: Callable[[], float]) -> bool:
    """Whether ``clock`` is a clock of :mod:`time` that reads ``CLOCK_MONOTONIC``
    (the core then reads that clock itself, without waiting for the GIL)."""
    for name in ("monotonic", "perf_counter"):
        if clock is getattr(time, name):
            info = time.get_clock_info(name)
            return info.implementation == "clock_gettime(CLOCK_MONOTONIC)"
    return False


SELECTIVE: dict[str, int] = {
    "lmr": 1,
    "rfp": 2,
    "nmp": 4,
    "qs": 8,
    "lmp": 16,
    "iir": 32,
    "hist": 64,
    "hp": 128,
    "rfpd": 256,
    "fp": 512,
    "lmri": 1024,
    "blk": 2048,
}
"""The compiled core's selective features by name (its ``SELECTIVE_*`` bits):
``lmr`` late move reductions with re-search, ``rfp`` reverse futility pruning, ``nmp``
null move pruning, ``qs`` threats resolved to the end (a side facing a win to stop is
searched on, up to the core's ``MAX_QEXT`` extensions a line, inside the tree and at
its horizon), ``lmp`` late quiet moves left out at the frontier (searched after all
when the rest lose), ``iir`` internal iterative reduction (a node four or more plies
from the horizon without a table move searched a ply shallower), ``hist`` a history of
the mover's (from, to, first build) with a malus for the quiet moves searched before a
cut, ordering the quiet moves and shortening or lengthening their reductions, ``hp``
history pruning (a quiet move with a bad history 1-3 plies from the horizon left out,
searched after all when the rest lose), ``rfpd`` reverse futility up to 8 plies from
the horizon, with half the margin off when the side's evaluation rose since its last
turn (santorini-ai's wider rule), ``fp`` futility pruning (quiet moves 1-2 plies from
the horizon whose evaluation is far below alpha left out, searched after all when the
rest lose), ``lmri`` a ply more of late move reduction where the side's evaluation fell
since its last turn, ``blk`` a side facing a win searches only the turns that stop it
(the others lose at the next ply: the same value)."""

_lock = threading.Lock()
_state: dict[str, Any] = {}


def core_module() -> ModuleType | None:
    """The compiled core, keys set, or None when it is not built (logged once)."""
    if "module" in _state:
        known: ModuleType | None = _state["module"]
        return known
    with _lock:
        if "module" not in _state:
            try:
                mod = importlib.import_module("meeple.ai._santorini_core")
            except ImportError as exc:
                logger.info("santorini search: python (the compiled core is not built: %s)", exc)
                _state["module"] = None
            else:
                mod.set_keys(
                    [k for row in Z_CODE for k in row],
                    [k for row in Z_WORKER for k in row],
                    list(Z_TURN),
                    Z_ATHENA_UP,
                )
                logger.info("santorini search: native (the compiled core)")
                _state["module"] = mod
    out: ModuleType | None = _state["module"]
    return out


def god_indices(mod: ModuleType, gods: Sequence[str | None]) -> tuple[int, int] | None:
    """The core's numbers of a pair of gods, or None when it lacks one of them."""
    names: tuple[str | None, ...] = mod.GODS
    try:
        return (names.index(gods[0]), names.index(gods[1]))
    except ValueError:
        return None


def core_children(
    mod: ModuleType,
    twin: GodTwin,
    node: tuple[int, tuple[int, ...], tuple[int, ...], int, int, int],
) -> list[tuple[TwinMove, Any]]:
    """The core's turns of a twin node, as :meth:`GodTwin.children` gives them (the
    first route to each distinct end kept)."""
    gods = god_indices(mod, twin.gods)
    assert gods is not None
    _key, h, wk, turn, _winner, mu = node
    seen: dict[Any, tuple[TwinMove, Any]] = {}
    for steps, child in mod.children(h, wk, turn, mu, gods, twin.zgods):
        end = (child[1], child[2], child[4], child[5])
        if end not in seen:
            seen[end] = (steps, child)
    return list(seen.values())


_nets: dict[int, tuple[NetWeights, Any]] = {}


def native_net(mod: ModuleType, net: NetWeights) -> Any:
    """The core's ``Net`` of a network's weights (made once per weights object)."""
    known = _nets.get(id(net))
    if known is not None and known[0] is net:
        return known[1]
    with _lock:
        if len(_nets) > 8:
            _nets.clear()
        made = mod.Net(net.w1, net.b1, net.w2, net.b2, net.scale, net.residual)
        _nets[id(net)] = (net, made)
    return made


@dataclass(frozen=True, slots=True)
class CoreResult:
    """A search's answer: the turn (twin steps; empty when the mover has no turn),
    whether it ends the game, its value for the mover, the last finished depth, the
    nodes visited and (depth, value) per finished iteration."""

    steps: TwinMove
    ended: bool
    value: int
    depth: int
    nodes: int
    iterations: tuple[tuple[int, int], ...]


class CoreBusy(RuntimeError):
    """The search context is searching in another thread (one search at a time)."""


class NativeSearch:
    """A compiled search context: one search at a time (its table lives on); a second
    search started meanwhile raises :class:`CoreBusy`."""

    def __init__(self, mod: ModuleType, table_bits: int = 18) -> None:
        self._mod = mod
        self._core = mod.Core(table_bits)
        self._lock = threading.Lock()

    def search(
        self,
        twin: GodTwin,
        node: tuple[int, tuple[int, ...], tuple[int, ...], int, int, int],
        weights: Sequence[int],
        god_weights: Sequence[int] | None,
        *,
        max_depth: int,
        max_nodes: int | None,
        clock: Callable[[], float] | None,
        seconds: float | None,
        use_table: bool = True,
        reductions: bool = False,
        selective: int = 0,
        net: NetWeights | None = None,
    ) -> CoreResult | None:
        """Search a twin node; None when the core lacks one of the gods.
        ``use_table=False`` and ``selective=0`` give the exact minimax value at a depth
        (tests compare it with the Python search's); ``reductions`` searches late quiet
        moves one or two plies shallower first (the first late move reductions, kept
        for comparison). ``selective`` is a mask of the core's ``SELECTIVE_*`` bits
        (:data:`SELECTIVE`; late move reductions with re-search, reverse futility, null
        move, threats resolved to the end, late move pruning at the frontier): what the
        players search with. ``net`` evaluates a game without gods by the network
        (:mod:`meeple.ai.santorini_net`) instead of ``weights``."""
        gods = god_indices(self._mod, twin.gods)
        if gods is None:
            return None
        _key, h, wk, turn, _winner, mu = node
        if not self._lock.acquire(blocking=False):
            raise CoreBusy("this search context is searching in another thread")
        try:
            found = self._core.search(
                h,
                wk,
                turn,
                mu,
                gods,
                twin.zgods,
                tuple(weights),
                None if god_weights is None else tuple(god_weights),
                max_depth=max_depth,
                max_nodes=-1 if max_nodes is None else max_nodes,
                clock=clock if seconds is not None else None,
                seconds=-1.0 if seconds is None else seconds,
                use_table=use_table,
                reductions=reductions,
                selective=selective,
                monotonic=clock is not None and _reads_clock_monotonic(clock),
                net=None if net is None else native_net(self._mod, net),
            )
        finally:
            self._lock.release()
        steps, ended, value, depth, nodes, iterations = found
        return CoreResult(tuple(steps), bool(ended), value, depth, nodes, tuple(iterations))

    def stats(self) -> dict[str, Any]:
        """The last search's counters: ``ply_nodes`` (nodes by ply from the root),
        ``iteration_nodes`` (nodes at the end of each finished iteration),
        ``cut_nodes`` / ``first_cuts`` / ``cut_index_sum`` (nodes that failed high, those
        whose first move did, the sum of the cutting moves' places), ``all_nodes``
        (nodes searched that did not fail high), ``tt_probes`` / ``tt_hits`` /
        ``tt_returns`` (table look-ups, those that found the position, those that
        answered the node), ``researches`` (reduced moves searched again) and
        ``check_nodes`` / ``check_moves`` (nodes facing a win to stop, their turns)."""
        out: dict[str, Any] = self._core.stats()
        return out

    def clear(self) -> None:
        """Forget the table, killers and history (a new game)."""
        with self._lock:
            self._core.clear()
