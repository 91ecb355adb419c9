"""The basic rules as a :class:`Power`, and each god as a small subclass of it.

The engine (:mod:`meeple.games.santorini.game`) never names a god: on a player's turn
it asks that player's power which steps may come next (:meth:`Power.options`), where
a worker may move (:meth:`Power.moves`) and build (:meth:`Power.builds`) and whether a
move wins (:meth:`Power.wins_by_move`); then it asks every *other* living player's
power whether it forbids that move, build or win (Athena, Hypnus, Limus, Hera, Hades).
A god overrides the few methods its card changes and calls ``super()`` for the rest,
so the basic rules stay in one place. Players without a god (AM27 ``"Atheist"``) get
:data:`MORTAL`.

Each reading follows the published god cards (Santorini, Roxley 2016); where a card
leaves a question open the class docstring says which way meeple reads it, and
docs/santorini-engine.md lists them all. Every god uses one worker for its whole turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from meeple.games.santorini.board import DOME, MAX_LEVEL, NEIGHBOURS, PERIMETER, Cell, behind
from meeple.games.santorini.state import BuildStep, GameState, MoveStep, Worker

__all__ = [
    "GODS",
    "MORTAL",
    "Apollo",
    "Artemis",
    "Athena",
    "Atlas",
    "Chronus",
    "Demeter",
    "Hades",
    "Hephaestus",
    "Hera",
    "Hestia",
    "Hypnus",
    "Limus",
    "Minotaur",
    "MoveOption",
    "Options",
    "Pan",
    "Power",
    "Prometheus",
    "Triton",
    "Zeus",
    "power_of",
]

MoveOption = tuple[Cell, tuple[Worker, Cell] | None]
"""Where a worker may move, and the opponent worker forced aside (and where) by it."""

Options = tuple[bool, bool, bool]
"""What may come next in a turn: (a move, a build, ending the turn)."""

_MOVE: Options = (True, False, False)
_BUILD: Options = (False, True, False)
_END: Options = (False, False, True)
_MOVE_OR_BUILD: Options = (True, True, False)
_BUILD_OR_END: Options = (False, True, True)
_NOTHING: Options = (False, False, False)


def _moves_made(s: GameState) -> list[MoveStep]:
    return [x for x in s.steps if isinstance(x, MoveStep)]


def _builds_after_move(s: GameState) -> list[BuildStep]:
    """The builds since the turn's last move (Prometheus' build before it does not count)."""
    out: list[BuildStep] = []
    for x in reversed(s.steps):
        if isinstance(x, MoveStep):
            break
        out.append(x)
    out.reverse()
    return out


class Power:
    """The basic rules of a turn: move one worker, then build with it, then end the turn.

    Methods take the state and ``me``, the seat whose power this is. The ``forbids_*``
    methods are asked on *other* players' turns (``other`` is the seat on turn).
    """

    name: ClassVar[str] = "Atheist"
    description: ClassVar[str] = "No god: the basic rules."

    # -- your turn

    def options(self, s: GameState, me: int) -> Options:
        """Which kinds of step may come next, given ``s.steps`` so far."""
        if not s.steps:
            return _MOVE
        if not any(isinstance(x, MoveStep) for x in s.steps):
            return _MOVE  # only after a build before moving (Prometheus)
        if isinstance(s.steps[-1], MoveStep):
            return _BUILD
        return _END

    def moves(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[MoveOption]:
        """Where worker ``w`` may move now: a neighbouring cell without a dome, at most one
        level up, free — or taken by an opponent when :meth:`force` says where it goes."""
        src = s.workers[w]
        assert src is not None
        levels, domes = s.levels, s.domes
        top = levels[src] + 1
        out: list[MoveOption] = []
        for d in NEIGHBOURS[src]:
            if domes[d] or levels[d] > top:
                continue
            o = occ[d]
            if o is None:
                out.append((d, None))
            elif o // 2 != me:
                to = self.force(s, me, w, src, d, o, occ)
                if to is not None:
                    out.append((d, (o, to)))
        return out

    def force(
        self,
        s: GameState,
        me: int,
        w: Worker,
        src: Cell,
        dst: Cell,
        victim: Worker,
        occ: Sequence[Worker | None],
    ) -> Cell | None:
        """Where the opponent worker ``victim`` on ``dst`` goes if ``w`` moves there; None
        (the basic rule) when it may not."""
        return None

    def builds(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[tuple[Cell, int]]:
        """Where worker ``w`` may build now and what: a free neighbouring cell without a
        dome gets the next block, a dome on level 3."""
        src = s.workers[w]
        assert src is not None
        levels, domes = s.levels, s.domes
        return [
            (d, levels[d] + 1 if levels[d] < MAX_LEVEL else DOME)
            for d in NEIGHBOURS[src]
            if occ[d] is None and not domes[d]
        ]

    def wins_by_move(self, s: GameState, me: int, step: MoveStep) -> bool:
        """Whether this move of one's own wins: moving up onto level 3."""
        return step.dst_level == MAX_LEVEL and step.src_level < MAX_LEVEL

    def wins_by_board(self, s: GameState, me: int) -> bool:
        """Whether the board as it stands wins for ``me`` (checked after every build)."""
        return False

    def turn_key(self, s: GameState) -> object:
        """What of the turn so far decides the rest of it, beside the board and workers
        (the search for a way to finish a turn remembers positions by it)."""
        return s.steps

    # -- other players' turns

    def forbids_move(
        self, s: GameState, me: int, other: int, w: Worker, src: Cell, dst: Cell
    ) -> bool:
        return False

    def forbids_build(
        self, s: GameState, me: int, other: int, w: Worker, c: Cell, level: int
    ) -> bool:
        return False

    def forbids_win(self, s: GameState, me: int, other: int, step: MoveStep) -> bool:
        return False


MORTAL = Power()
"""The power of a player without a god."""


class Apollo(Power):
    """Your Move: your worker may move into an opponent worker's space by forcing theirs
    to the space yours just vacated. (The usual height limit applies to your worker; the
    forced worker goes to your old space whatever its level.)"""

    name = "Apollo"
    description = (
        "Your Move: Your Worker may move into an opponent Worker's space by forcing "
        "their Worker to the space yours just vacated."
    )

    def force(
        self,
        s: GameState,
        me: int,
        w: Worker,
        src: Cell,
        dst: Cell,
        victim: Worker,
        occ: Sequence[Worker | None],
    ) -> Cell | None:
        return src


class Artemis(Power):
    """Your Move: your worker may move one additional time, but not back to its initial
    space. (The same worker; the second move is optional.)"""

    name = "Artemis"
    description = (
        "Your Move: Your Worker may move one additional time, but not back to its initial space."
    )

    def options(self, s: GameState, me: int) -> Options:
        if len(s.steps) == 1:
            return _MOVE_OR_BUILD
        return super().options(s, me)

    def moves(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[MoveOption]:
        out = super().moves(s, me, w, occ)
        if s.steps:
            first = s.steps[0]
            out = [m for m in out if m[0] != first.src] if isinstance(first, MoveStep) else out
        return out


class Athena(Power):
    """Opponent's Turn: if one of your workers moved up on your last turn, opponent
    workers cannot move up this turn."""

    name = "Athena"
    description = (
        "Opponent's Turn: If one of your Workers moved up on your last turn, "
        "opponent Workers cannot move up this turn."
    )

    def forbids_move(
        self, s: GameState, me: int, other: int, w: Worker, src: Cell, dst: Cell
    ) -> bool:
        return s.moved_up[me] and s.levels[dst] > s.levels[src]


class Atlas(Power):
    """Your Build: your worker may build a dome at any level (including the ground)."""

    name = "Atlas"
    description = "Your Build: Your Worker may build a dome at any level."

    def builds(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[tuple[Cell, int]]:
        out: list[tuple[Cell, int]] = []
        for c, level in super().builds(s, me, w, occ):
            out.append((c, level))
            if level != DOME:
                out.append((c, DOME))
        return out


class _SecondBuild(Power):
    """A god whose worker may build one additional time after its first build (Demeter,
    Hestia); :meth:`second_build_allowed` says where the second one may go."""

    def options(self, s: GameState, me: int) -> Options:
        if len(_builds_after_move(s)) == 1 and _moves_made(s):
            return _BUILD_OR_END
        return super().options(s, me)

    def builds(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[tuple[Cell, int]]:
        out = super().builds(s, me, w, occ)
        done = _builds_after_move(s)
        if done:
            out = [b for b in out if self.second_build_allowed(b[0], done[0].cell)]
        return out

    def second_build_allowed(self, cell: Cell, first: Cell) -> bool:
        raise NotImplementedError


class Demeter(_SecondBuild):
    """Your Build: your worker may build one additional time, but not on the same space."""

    name = "Demeter"
    description = (
        "Your Build: Your Worker may build one additional time, but not on the same space."
    )

    def second_build_allowed(self, cell: Cell, first: Cell) -> bool:
        return cell != first


class Hephaestus(Power):
    """Your Build: your worker may build one additional block (not a dome) on top of
    your first block. (So the first build must have been a block below level 3.)"""

    name = "Hephaestus"
    description = (
        "Your Build: Your Worker may build one additional block (not dome) "
        "on top of your first block."
    )

    def options(self, s: GameState, me: int) -> Options:
        done = _builds_after_move(s)
        if len(done) == 1 and _moves_made(s):
            return _BUILD_OR_END if done[0].level < MAX_LEVEL else _END
        return super().options(s, me)

    def builds(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[tuple[Cell, int]]:
        out = super().builds(s, me, w, occ)
        done = _builds_after_move(s)
        if done:
            out = [b for b in out if b[0] == done[0].cell and b[1] != DOME]
        return out


class Minotaur(Power):
    """Your Move: your worker may move into an opponent worker's space if their worker
    can be forced one space straight backwards to an unoccupied space at any level.
    (Unoccupied: no worker and no dome; off the board is not a space.)"""

    name = "Minotaur"
    description = (
        "Your Move: Your Worker may move into an opponent Worker's space, if their Worker "
        "can be forced one space straight backwards to an unoccupied space at any level."
    )

    def force(
        self,
        s: GameState,
        me: int,
        w: Worker,
        src: Cell,
        dst: Cell,
        victim: Worker,
        occ: Sequence[Worker | None],
    ) -> Cell | None:
        b = behind(src, dst)
        if b is None or occ[b] is not None or s.domes[b]:
            return None
        return b


class Pan(Power):
    """Win Condition: you also win if your worker moves down two or more levels."""

    name = "Pan"
    description = "Win Condition: You also win if your Worker moves down two or more levels."

    def wins_by_move(self, s: GameState, me: int, step: MoveStep) -> bool:
        return super().wins_by_move(s, me, step) or step.src_level - step.dst_level >= 2


class Prometheus(Power):
    """Your Turn: if your worker does not move up, it may build both before and after
    moving. (The worker that builds first is the one that moves and builds again.)"""

    name = "Prometheus"
    description = (
        "Your Turn: If your Worker does not move up, it may build both before and after moving."
    )

    def options(self, s: GameState, me: int) -> Options:
        if not s.steps:
            return _MOVE_OR_BUILD
        return super().options(s, me)

    def moves(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[MoveOption]:
        out = super().moves(s, me, w, occ)
        if s.steps and isinstance(s.steps[0], BuildStep):
            src = s.workers[w]
            assert src is not None
            here = s.levels[src]
            out = [m for m in out if s.levels[m[0]] <= here]
        return out


class Hera(Power):
    """Opponent's Turn: an opponent cannot win by moving into a perimeter space.
    (Other ways of winning, Chronus' towers, are not moves and stay open.)"""

    name = "Hera"
    description = "Opponent's Turn: An opponent cannot win by moving into a perimeter space."

    def forbids_win(self, s: GameState, me: int, other: int, step: MoveStep) -> bool:
        return step.dst in PERIMETER


class Hestia(_SecondBuild):
    """Your Build: your worker may build one additional time, but this cannot be on a
    perimeter space. (It may be on the same space as the first build.)"""

    name = "Hestia"
    description = (
        "Your Build: Your Worker may build one additional time, "
        "but this cannot be on a perimeter space."
    )

    def second_build_allowed(self, cell: Cell, first: Cell) -> bool:
        return cell not in PERIMETER


class Hypnus(Power):
    """Start of Opponent's Turn: if one of your opponent's workers is higher than all of
    their others, it cannot move. (Heights at the start of the turn: once a worker has
    moved, the restriction is past.)"""

    name = "Hypnus"
    description = (
        "Start of Opponent's Turn: If one of your opponent's Workers is higher than all "
        "of their others, it cannot move."
    )

    def forbids_move(
        self, s: GameState, me: int, other: int, w: Worker, src: Cell, dst: Cell
    ) -> bool:
        if any(isinstance(x, MoveStep) for x in s.steps):
            return False
        here = s.levels[src]
        others = [s.workers[v] for v in (2 * other, 2 * other + 1) if v != w]
        mates = [s.levels[c] for c in others if c is not None]
        return bool(mates) and all(here > m for m in mates)


class Limus(Power):
    """Opponent's Turn: opponent workers cannot build on spaces neighbouring your workers,
    unless building a dome to create a complete tower."""

    name = "Limus"
    description = (
        "Opponent's Turn: Opponent Workers cannot build on spaces neighboring your Workers, "
        "unless building a dome to create a Complete Tower."
    )

    def forbids_build(
        self, s: GameState, me: int, other: int, w: Worker, c: Cell, level: int
    ) -> bool:
        if level == DOME and s.levels[c] == MAX_LEVEL:
            return False
        for v in (2 * me, 2 * me + 1):
            at = s.workers[v]
            if at is not None and c in NEIGHBOURS[at]:
                return True
        return False


class Triton(Power):
    """Your Move: each time your worker moves into a perimeter space, it may immediately
    move again (the same worker, as often as it keeps landing on the perimeter)."""

    name = "Triton"
    description = (
        "Your Move: Each time your Worker moves into a perimeter space, "
        "it may immediately move again."
    )

    def options(self, s: GameState, me: int) -> Options:
        if s.steps:
            last = s.steps[-1]
            if isinstance(last, MoveStep) and last.dst in PERIMETER:
                return _MOVE_OR_BUILD
        return super().options(s, me)

    def turn_key(self, s: GameState) -> object:
        # Where the worker stands (on the perimeter or not) is part of the position
        # already; what else decides the rest of the turn is which worker moved (only it
        # builds: one walking out and back is not the other doing so) and whether it
        # built yet. (Whether it moved up is read only by Athena's power, of Athena's
        # own turn, so a Triton turn's flag is its route's, as for every god.)
        moves = _moves_made(s)
        if not moves:
            return None
        return (moves[0].worker, len(_builds_after_move(s)))


class Zeus(Power):
    """Your Build: your worker may build a block under itself (not a dome; it rises with
    the block, and rising onto level 3 that way does not win — it is not a move)."""

    name = "Zeus"
    description = "Your Build: Your Worker may build a block under itself."

    def builds(
        self, s: GameState, me: int, w: Worker, occ: Sequence[Worker | None]
    ) -> list[tuple[Cell, int]]:
        out = super().builds(s, me, w, occ)
        here = s.workers[w]
        assert here is not None
        if s.levels[here] < MAX_LEVEL:
            out.append((here, s.levels[here] + 1))
        return out


class Chronus(Power):
    """Win Condition: you also win when there are at least five complete towers (level 3
    with a dome) on the board — at once, whoever built the fifth."""

    name = "Chronus"
    description = (
        "Win Condition: You also win when there are at least five Complete Towers on the board."
    )

    def wins_by_board(self, s: GameState, me: int) -> bool:
        towers = sum(
            1 for lv, dome in zip(s.levels, s.domes, strict=True) if dome and lv == MAX_LEVEL
        )
        return towers >= 5


class Hades(Power):
    """Opponent's Turn: opponent workers cannot move down."""

    name = "Hades"
    description = "Opponent's Turn: Opponent Workers cannot move down."

    def forbids_move(
        self, s: GameState, me: int, other: int, w: Worker, src: Cell, dst: Cell
    ) -> bool:
        return s.levels[dst] < s.levels[src]


GODS: dict[str, Power] = {
    p.name: p
    for p in (
        Apollo(),
        Artemis(),
        Athena(),
        Atlas(),
        Demeter(),
        Hephaestus(),
        Minotaur(),
        Pan(),
        Prometheus(),
        Hera(),
        Hestia(),
        Hypnus(),
        Limus(),
        Triton(),
        Zeus(),
        Chronus(),
        Hades(),
    )
}
"""Every god the engine knows, by name (the AM27 ``godName``)."""


def power_of(god: str | None) -> Power:
    """The power for a god's name; :data:`MORTAL` for None."""
    return MORTAL if god is None else GODS[god]
