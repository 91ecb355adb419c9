"""Actions, events, the rules of a turn, the legal-action queries, and the Game façade.

Two levels:

- Pure functions over :class:`~meeple.games.santorini.state.GameState`:
  :func:`new_game`, :func:`advance` (state, action) -> (state, events), and the queries
  :func:`legal_actions`, :func:`reachable_cells`, :func:`buildable_cells`,
  :func:`available_gods`, :func:`can_place_worker`, :func:`can_pass`,
  :func:`can_complete_turn`. The AI searches with these.
- :class:`Game`, which holds the current state, the action log and the states of the
  turn in progress, so it can also :class:`Undo` (AM27 ``UNDO``) one step or the turn.

Every rule the engine checks raises a :class:`~meeple.games.santorini.errors.RuleError`
subclass that names it; a state is never left half-changed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from meeple.games.santorini.board import CELLS, DOME, NEIGHBOURS, Cell
from meeple.games.santorini.errors import (
    CellOccupied,
    DeadEnd,
    Domed,
    GameIsOver,
    GodForbids,
    GodUnavailable,
    MustLose,
    NoSuchCell,
    NoSuchPlayer,
    NothingToUndo,
    NotNeighbour,
    NotYourTurn,
    NoWorkerThere,
    Occupied,
    OutOfOrder,
    TooHigh,
    UnknownGod,
    WorkerAlreadyPlaced,
    WrongLevel,
    WrongPhase,
    WrongWorker,
)
from meeple.games.santorini.gods import GODS, MORTAL, Power, power_of
from meeple.games.santorini.state import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    BuildStep,
    GameState,
    MoveStep,
    Phase,
    Rules,
    Sex,
    Worker,
    worker_of,
)

__all__ = [
    "Action",
    "Build",
    "Built",
    "ChooseGod",
    "ChooseStarter",
    "Event",
    "Game",
    "GameRecord",
    "GameWon",
    "GodChosen",
    "GodOffered",
    "Lose",
    "Move",
    "OfferGod",
    "Pass",
    "PlaceWorker",
    "PlayerLost",
    "StarterChosen",
    "TurnEnded",
    "TurnStarted",
    "Undo",
    "Undone",
    "WorkerForced",
    "WorkerMoved",
    "WorkerPlaced",
    "advance",
    "available_gods",
    "buildable_cells",
    "can_complete_turn",
    "can_pass",
    "can_place_worker",
    "changed_cells",
    "god_set",
    "legal_actions",
    "legal_steps",
    "new_game",
    "reachable_cells",
    "replay",
    "same_turn_end",
    "turns",
]


# ---------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class OfferGod:
    """The challenger puts ``god`` into the pool (phase POOL; one per player)."""

    player: int
    god: str


@dataclass(frozen=True, slots=True)
class ChooseGod:
    """``player`` takes ``god`` (phase GODS; AM27 ``GODINIT``)."""

    player: int
    god: str


@dataclass(frozen=True, slots=True)
class ChooseStarter:
    """The challenger names the seat that plays first (AM27 ``CHOSESTARTER``)."""

    player: int
    starter: int


@dataclass(frozen=True, slots=True)
class PlaceWorker:
    """Put a worker of ``player`` on ``cell`` (AM27 ``WORKERINIT``). ``sex`` names which;
    None takes the male worker first."""

    player: int
    cell: Cell
    sex: Sex | None = None


@dataclass(frozen=True, slots=True)
class Move:
    """Move the worker on ``src`` to ``dst`` (AM27 ``MOVE``)."""

    player: int
    src: Cell
    dst: Cell


@dataclass(frozen=True, slots=True)
class Build:
    """With the worker on ``src`` build on ``dst``: ``level`` is what the cell becomes,
    1–3 for a block, 4 (``DOME``) for a dome (AM27 ``BUILD``)."""

    player: int
    src: Cell
    dst: Cell
    level: int


@dataclass(frozen=True, slots=True)
class Pass:
    """End the turn once it is complete (AM27 ``PASS``); also declines optional steps."""

    player: int


@dataclass(frozen=True, slots=True)
class Undo:
    """Take back the last step of the turn, or with ``all`` the whole turn (AM27
    ``UNDO``). Only :class:`Game` can apply it: it keeps the turn's states."""

    player: int
    all: bool = False


@dataclass(frozen=True, slots=True)
class Lose:
    """``player`` gives up (AM27 ``LOSE``): their workers leave the board; with three
    players the others play on."""

    player: int


Action = OfferGod | ChooseGod | ChooseStarter | PlaceWorker | Move | Build | Pass | Undo | Lose


# ----------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class GodOffered:
    player: int
    god: str


@dataclass(frozen=True, slots=True)
class GodChosen:
    player: int
    god: str


@dataclass(frozen=True, slots=True)
class StarterChosen:
    player: int
    starter: int


@dataclass(frozen=True, slots=True)
class WorkerPlaced:
    player: int
    worker: Worker
    cell: Cell


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """``player``'s turn begins (after the set-up, and after each pass)."""

    player: int


@dataclass(frozen=True, slots=True)
class WorkerMoved:
    player: int
    worker: Worker
    src: Cell
    dst: Cell


@dataclass(frozen=True, slots=True)
class WorkerForced:
    """An opponent's ``worker`` was swapped or pushed from ``src`` to ``dst`` by ``god``."""

    player: int
    worker: Worker
    src: Cell
    dst: Cell
    god: str


@dataclass(frozen=True, slots=True)
class Built:
    """``player``'s ``worker`` built on ``cell``: ``level`` 1–3, or 4 a dome."""

    player: int
    worker: Worker
    cell: Cell
    level: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    player: int


@dataclass(frozen=True, slots=True)
class Undone:
    """``player`` took back one step (or the whole turn); ``cells`` changed by it."""

    player: int
    all: bool
    cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class PlayerLost:
    """``player`` is out: ``reason`` is ``"stuck"`` (could not complete a turn) or
    ``"resigned"`` (:class:`Lose`). Their workers left the board."""

    player: int
    reason: str


@dataclass(frozen=True, slots=True)
class GameWon:
    """``player`` won: ``reason`` is ``"level3"``, ``"god"`` (a god's win condition,
    ``god`` names it) or ``"last"`` (everyone else lost)."""

    player: int
    reason: str
    god: str | None = None


Event = (
    GodOffered
    | GodChosen
    | StarterChosen
    | WorkerPlaced
    | TurnStarted
    | WorkerMoved
    | WorkerForced
    | Built
    | TurnEnded
    | Undone
    | PlayerLost
    | GameWon
)


# ---------------------------------------------------------------------------- set-up


def god_set(rules: Rules) -> tuple[str, ...]:
    """The gods a game with these rules can use (all known gods when unrestricted)."""
    return tuple(GODS) if rules.god_set is None else rules.god_set


def new_game(rules: Rules = Rules(), challenger: int = 0) -> GameState:  # noqa: B008 (frozen)
    """The state before any action. ``challenger`` is the seat that offers the gods (with
    gods) and names the starter; the caller picks it (the published rules: the most
    godlike player; the AM27 server: the last player to join)."""
    n = rules.players
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"Santorini takes {MIN_PLAYERS}–{MAX_PLAYERS} players")
    if not 0 <= challenger < n:
        raise ValueError(f"no seat {challenger} to be challenger")
    gods = god_set(rules)
    unknown = [g for g in gods if g not in GODS]
    if unknown:
        raise ValueError(f"unknown gods {unknown}")
    if rules.gods and len(set(gods)) < n:
        raise ValueError("the god set must hold at least one god per player")
    if not rules.gods:
        phase, turn = Phase.STARTER, challenger
    elif rules.challenger_picks_pool:
        phase, turn = Phase.POOL, challenger
    else:
        phase, turn = Phase.GODS, (challenger + 1) % n
    return GameState(
        rules=rules,
        challenger=challenger,
        phase=phase,
        turn=turn,
        gods=(None,) * n,
        workers=(None,) * (2 * n),
        alive=(True,) * n,
        moved_up=(False,) * n,
    )


def available_gods(s: GameState) -> tuple[str, ...]:
    """The gods the seat on turn may offer (POOL) or choose (GODS) now, else ()."""
    if s.phase is Phase.POOL:
        return tuple(g for g in god_set(s.rules) if g not in s.pool)
    if s.phase is Phase.GODS:
        source = s.pool if s.rules.challenger_picks_pool else god_set(s.rules)
        return tuple(g for g in source if g not in s.gods)
    return ()


def can_place_worker(s: GameState, player: int) -> bool:
    """Whether ``player`` is to place a worker now (AM27 ``canPlaceWorker``)."""
    return s.phase is Phase.PLACE and s.turn == player


# ------------------------------------------------------------------------ turn steps


def _power(s: GameState, seat: int) -> Power:
    return power_of(s.gods[seat]) if s.rules.gods else MORTAL


def _opponents(s: GameState, me: int) -> list[tuple[int, Power]]:
    """Living opponents whose god can restrict ``me``."""
    if not s.rules.gods:
        return []
    return [
        (seat, GODS[g])
        for seat, g in enumerate(s.gods)
        if seat != me and s.alive[seat] and g is not None
    ]


def _candidate_workers(s: GameState, me: int) -> tuple[Worker, ...]:
    tw = s.turn_worker()
    return (tw,) if tw is not None else s.workers_of(me)


def _acting(
    s: GameState, me: int, step: int
) -> tuple[Power, list[tuple[int, Power]], list[tuple[Worker, Cell]]]:
    """What a move (``step`` 0) or a build (1) of ``me`` depends on: ``me``'s power, the
    opponents whose gods can forbid it, and the workers that may take it, each with its
    cell (none when the power does not offer that step now)."""
    power = _power(s, me)
    if not power.options(s, me)[step]:
        return power, [], []
    workers = []
    for w in _candidate_workers(s, me):
        src = s.workers[w]
        assert src is not None
        workers.append((w, src))
    return power, _opponents(s, me), workers


def _raw_moves(s: GameState, me: int, occ: Sequence[Worker | None]) -> Iterator[Move]:
    """Moves the rules and every god allow now, without asking whether the turn can end."""
    power, opponents, workers = _acting(s, me, 0)
    for w, src in workers:
        for dst, _forced in power.moves(s, me, w, occ):
            if not any(p.forbids_move(s, seat, me, w, src, dst) for seat, p in opponents):
                yield Move(me, src, dst)


def _raw_builds(s: GameState, me: int, occ: Sequence[Worker | None]) -> Iterator[Build]:
    power, opponents, workers = _acting(s, me, 1)
    for w, src in workers:
        for c, level in power.builds(s, me, w, occ):
            if not any(p.forbids_build(s, seat, me, w, c, level) for seat, p in opponents):
                yield Build(me, src, c, level)


def _raw_steps(s: GameState) -> Iterator[Move | Build | Pass]:
    occ = s.occupancy()
    yield from _raw_moves(s, s.turn, occ)
    yield from _raw_builds(s, s.turn, occ)
    if _power(s, s.turn).options(s, s.turn)[2]:
        yield Pass(s.turn)


def _finishes(s: GameState, me: int, seen: set[object]) -> bool:
    """Whether ``me`` can still complete the turn from ``s`` (a win counts)."""
    if s.phase is not Phase.PLAY or s.turn != me:
        return True  # the game ended (a win by the step taken), or the turn passed
    power = _power(s, me)
    if power.options(s, me)[2]:
        return True
    key = (s.workers, s.levels, s.domes, power.turn_key(s))
    if key in seen:
        return False
    seen.add(key)
    for step in _raw_steps(s):
        nxt, _ = _step(s, step)
        if _finishes(nxt, me, seen):
            return True
    return False


def can_complete_turn(s: GameState) -> bool:
    """Whether the seat on turn can still complete its turn from here (phase PLAY)."""
    return s.phase is Phase.PLAY and _finishes(s, s.turn, set())


def turns(s: GameState) -> Iterator[tuple[tuple[Move | Build | Pass, ...], GameState]]:
    """Every distinct way to complete the turn in progress: the steps (a Pass last, unless
    a step wins) and the state after them (the next player's turn, or the game over).
    Turns that end in the same position are given once, by a shortest route. This is
    what a search expands."""
    if s.phase is not Phase.PLAY or _stuck_waiting(s):
        return
    me = s.turn
    seen: set[object] = set()
    done: set[object] = set()
    # Breadth first, so each position is reached by a shortest route (a Triton worker
    # never walks in circles on the way to its build).
    queue: deque[tuple[GameState, tuple[Move | Build | Pass, ...]]] = deque([(s, ())])
    while queue:
        cur, path = queue.popleft()
        power = _power(cur, me)
        key = (cur.workers, cur.levels, cur.domes, power.turn_key(cur))
        if key in seen:
            continue
        seen.add(key)
        for step in _raw_steps(cur):
            nxt, _ = _step(cur, step)
            route = (*path, step)
            if nxt.phase is Phase.PLAY and nxt.turn == me and not isinstance(step, Pass):
                queue.append((nxt, route))
                continue
            end = (nxt.workers, nxt.levels, nxt.domes, nxt.winner, nxt.alive, nxt.moved_up)
            if end not in done:
                done.add(end)
                yield route, nxt


def same_turn_end(a: GameState, b: GameState) -> bool:
    """Whether two positions are the same for the game from here on: equal, or equal
    but for a ``moved_up`` flag no power reads (only Athena reads hers, on the
    opponents' turns). A Triton walking up and down again ends its turn with the flag
    set, the shortest route :func:`turns` gives to the same cell without it."""
    return a == b or _read_flags(a) == _read_flags(b)


def _read_flags(s: GameState) -> GameState:
    kept = tuple(
        up and s.rules.gods and s.gods[seat] == "Athena" for seat, up in enumerate(s.moved_up)
    )
    return replace(s, moved_up=kept)


def legal_steps(s: GameState) -> list[Move | Build | Pass]:
    """The moves, builds and pass the seat on turn may take now, each one leaving a way
    to complete the turn (a winning step always does). [] outside phase PLAY."""
    if s.phase is not Phase.PLAY or _stuck_waiting(s):
        return []
    out: list[Move | Build | Pass] = []
    for step in _raw_steps(s):
        if isinstance(step, Pass):
            out.append(step)
            continue
        nxt, _ = _step(s, step)
        if _finishes(nxt, s.turn, set()):
            out.append(step)
    return out


def legal_actions(s: GameState) -> list[Action]:
    """Every action the seat on turn may take now, in any phase (not :class:`Undo`,
    which needs a :class:`Game`, nor :class:`Lose`, which is always open in play)."""
    me = s.turn
    if s.phase is Phase.POOL:
        return [OfferGod(me, g) for g in available_gods(s)]
    if s.phase is Phase.GODS:
        return [ChooseGod(me, g) for g in available_gods(s)]
    if s.phase is Phase.STARTER:
        return [ChooseStarter(me, seat) for seat in range(s.players) if s.alive[seat]]
    if s.phase is Phase.PLACE:
        occ = s.occupancy()
        sex = _next_sex(s, me)
        return [PlaceWorker(me, c, sex) for c in CELLS if occ[c] is None]
    if s.phase is Phase.PLAY:
        return list(legal_steps(s))
    return []


def reachable_cells(s: GameState, player: int) -> dict[Cell, tuple[Cell, ...]]:
    """For each of ``player``'s workers on the board (by cell, male first) the cells it
    may move to now (AM27 ``reachableCells``). Empty lists when moving is not what comes
    next; {} when ``player`` is not on turn in play."""
    if s.phase is not Phase.PLAY or s.turn != player or not s.alive[player]:
        return {}
    out: dict[Cell, list[Cell]] = {}
    for w in s.workers_of(player):
        at = s.workers[w]
        assert at is not None
        out[at] = []
    for step in legal_steps(s):
        if isinstance(step, Move):
            out[step.src].append(step.dst)
    return {k: tuple(v) for k, v in out.items()}


def buildable_cells(s: GameState, player: int) -> dict[Cell, dict[Cell, tuple[int, ...]]]:
    """For each of ``player``'s workers on the board the cells it may build on now and
    the levels that may go there (4 a dome) (AM27 ``buildableCells``)."""
    if s.phase is not Phase.PLAY or s.turn != player or not s.alive[player]:
        return {}
    out: dict[Cell, dict[Cell, list[int]]] = {}
    for w in s.workers_of(player):
        at = s.workers[w]
        assert at is not None
        out[at] = {}
    for step in legal_steps(s):
        if isinstance(step, Build):
            out[step.src].setdefault(step.dst, []).append(step.level)
    return {k: {c: tuple(v) for c, v in cells.items()} for k, cells in out.items()}


def can_pass(s: GameState, player: int) -> bool:
    """Whether ``player`` may end the turn now (AM27 ``canPass``)."""
    return (
        s.phase is Phase.PLAY
        and s.turn == player
        and not _stuck_waiting(s)
        and _power(s, player).options(s, player)[2]
    )


def _stuck_waiting(s: GameState) -> bool:
    """A player who cannot complete the turn, waiting to send Lose (no auto-elimination)."""
    return not s.rules.auto_eliminate and not s.steps and not can_complete_turn(s)


def changed_cells(before: GameState, after: GameState) -> tuple[Cell, ...]:
    """The cells whose building or worker differs between two states (AM27
    ``boardUpdate``), in cell order."""
    occ_a, occ_b = before.occupancy(), after.occupancy()
    return tuple(
        c
        for c in CELLS
        if before.levels[c] != after.levels[c]
        or before.domes[c] != after.domes[c]
        or occ_a[c] != occ_b[c]
    )


# ------------------------------------------------------------------------- applying


def _check_turn(s: GameState, player: int, action: str, *phases: Phase) -> None:
    if s.phase is Phase.OVER:
        raise GameIsOver("the game is over")
    if s.phase not in phases:
        raise WrongPhase(action, s.phase.value)
    if player != s.turn:
        raise NotYourTurn(player, s.turn)


def _next_sex(s: GameState, seat: int) -> Sex:
    return Sex.MALE if s.workers[2 * seat] is None else Sex.FEMALE


def _next_seat(s: GameState, seat: int) -> int:
    n = s.players
    for i in range(1, n + 1):
        nxt = (seat + i) % n
        if s.alive[nxt]:
            return nxt
    return seat


def _step(s: GameState, action: Move | Build | Pass) -> tuple[GameState, list[Event]]:
    """Apply a step known to be allowed by the rules (no checks)."""
    me = s.turn
    if isinstance(action, Pass):
        up = any(isinstance(x, MoveStep) and x.dst_level > x.src_level for x in s.steps)
        moved_up = (*s.moved_up[:me], up, *s.moved_up[me + 1 :])
        ended = replace(s, steps=(), moved_up=moved_up)
        events: list[Event] = [TurnEnded(me)]
        return _start_turn(ended, _next_seat(ended, me), events)
    occ = s.occupancy()
    w = occ[action.src]
    assert w is not None
    levels = s.levels
    if isinstance(action, Move):
        power = _power(s, me)
        forced = None
        workers = list(s.workers)
        events = [WorkerMoved(me, w, action.src, action.dst)]
        victim = occ[action.dst]
        if victim is not None:
            to = power.force(s, me, w, action.src, action.dst, victim, occ)
            assert to is not None
            forced = (victim, to)
            workers[victim] = to
            events.append(WorkerForced(victim // 2, victim, action.dst, to, power.name))
        workers[w] = action.dst
        rec = MoveStep(w, action.src, action.dst, levels[action.src], levels[action.dst], forced)
        nxt = replace(s, workers=tuple(workers), steps=(*s.steps, rec))
        if power.wins_by_move(nxt, me, rec) and not any(
            p.forbids_win(nxt, seat, me, rec) for seat, p in _opponents(nxt, me)
        ):
            reason = "level3" if Power.wins_by_move(MORTAL, nxt, me, rec) else "god"
            events.append(GameWon(me, reason, None if reason == "level3" else power.name))
            return replace(nxt, phase=Phase.OVER, winner=me), events
        return nxt, events
    # Build
    c, level = action.dst, action.level
    if level == DOME:
        domes = (*s.domes[:c], True, *s.domes[c + 1 :])
        nxt = replace(s, domes=domes, steps=(*s.steps, BuildStep(w, c, level)))
    else:
        new_levels = (*levels[:c], level, *levels[c + 1 :])
        nxt = replace(s, levels=new_levels, steps=(*s.steps, BuildStep(w, c, level)))
    events = [Built(me, w, c, level)]
    if nxt.rules.gods:
        # A board win (Chronus) is checked for every living god, the builder first.
        order = [me] + [seat for seat in range(nxt.players) if seat != me]
        for seat in order:
            if nxt.alive[seat] and _power(nxt, seat).wins_by_board(nxt, seat):
                events.append(GameWon(seat, "god", _power(nxt, seat).name))
                return replace(nxt, phase=Phase.OVER, winner=seat), events
    return nxt, events


def _eliminate(s: GameState, seat: int, reason: str, events: list[Event]) -> GameState:
    alive = (*s.alive[:seat], False, *s.alive[seat + 1 :])
    workers = tuple(None if w // 2 == seat else at for w, at in enumerate(s.workers))
    events.append(PlayerLost(seat, reason))
    out = replace(s, alive=alive, workers=workers, losers=(*s.losers, seat), steps=())
    living = [p for p in range(out.players) if out.alive[p]]
    if len(living) == 1:
        events.append(GameWon(living[0], "last"))
        return replace(out, phase=Phase.OVER, winner=living[0])
    return out


def _start_turn(s: GameState, seat: int, events: list[Event]) -> tuple[GameState, list[Event]]:
    """Begin ``seat``'s turn; with auto-elimination a seat that cannot complete a turn
    loses at once (with three players the next one goes on)."""
    s = replace(s, phase=Phase.PLAY, turn=seat, steps=())
    while s.rules.auto_eliminate and not can_complete_turn(s):
        s = _eliminate(s, seat, "stuck", events)
        if s.phase is Phase.OVER:
            return s, events
        seat = _next_seat(s, seat)
        s = replace(s, turn=seat)
    events.append(TurnStarted(seat))
    return s, events


def _acting_worker(
    s: GameState, a: Move | Build
) -> tuple[int, Sequence[Worker | None], Worker, Power]:
    """Checks a move and a build share: both cells exist, the worker on ``a.src`` is the
    mover's and, once the turn has a worker, that one. Returns who acts, the occupancy,
    the worker and the mover's power."""
    me = s.turn
    occ = s.occupancy()
    if not 0 <= a.src < len(CELLS):
        raise NoSuchCell(a.src)
    if not 0 <= a.dst < len(CELLS):
        raise NoSuchCell(a.dst)
    w = occ[a.src]
    if w is None or w // 2 != me:
        raise NoWorkerThere(a.src)
    tw = s.turn_worker()
    if tw is not None and tw != w:
        turn_cell = s.workers[tw]
        assert turn_cell is not None
        raise WrongWorker(a.src, turn_cell)
    return me, occ, w, _power(s, me)


def _validate_move(s: GameState, a: Move) -> None:
    me, occ, w, power = _acting_worker(s, a)
    may_move, may_build, _may_end = power.options(s, me)
    if not may_move:
        raise OutOfOrder("move", "a build" if may_build else "the end of the turn")
    if a.dst not in NEIGHBOURS[a.src]:
        raise NotNeighbour(a.src, a.dst)
    if a.dst not in {d for d, _ in power.moves(s, me, w, occ)}:
        if s.domes[a.dst]:
            raise Domed(a.dst)
        if s.levels[a.dst] > s.levels[a.src] + 1:
            raise TooHigh(s.levels[a.src], s.levels[a.dst])
        if occ[a.dst] is not None:
            raise Occupied(a.dst)
        raise GodForbids(power.name, me, f"moving to cell {a.dst}")
    for seat, p in _opponents(s, me):
        if p.forbids_move(s, seat, me, w, a.src, a.dst):
            raise GodForbids(p.name, seat, f"moving to cell {a.dst}")


def _validate_build(s: GameState, a: Build) -> None:
    me, occ, w, power = _acting_worker(s, a)
    may_move, may_build, _may_end = power.options(s, me)
    if not may_build:
        raise OutOfOrder("build", "a move" if may_move else "the end of the turn")
    options = power.builds(s, me, w, occ)
    allowed = tuple(level for c, level in options if c == a.dst)
    if not allowed:
        if a.dst not in NEIGHBOURS[a.src]:
            raise NotNeighbour(a.src, a.dst)
        if s.domes[a.dst]:
            raise Domed(a.dst)
        if occ[a.dst] is not None:
            raise Occupied(a.dst)
        raise GodForbids(power.name, me, f"building on cell {a.dst}")
    if a.level not in allowed:
        raise WrongLevel(a.dst, a.level, allowed)
    for seat, p in _opponents(s, me):
        if p.forbids_build(s, seat, me, w, a.dst, a.level):
            raise GodForbids(p.name, seat, f"building on cell {a.dst}")


def advance(s: GameState, action: Action) -> tuple[GameState, list[Event]]:
    """The state after ``action`` and the events to announce, or a RuleError naming the
    broken rule (``s`` is a value and stays as it was). :class:`Undo` needs a
    :class:`Game` (it keeps the turn's earlier states)."""
    n = s.players
    if isinstance(action, OfferGod):
        _check_turn(s, action.player, "offering a god", Phase.POOL)
        if action.god not in god_set(s.rules):
            raise UnknownGod(action.god)
        if action.god in s.pool:
            raise GodUnavailable(action.god)
        pool = (*s.pool, action.god)
        events: list[Event] = [GodOffered(action.player, action.god)]
        if len(pool) < n:
            return replace(s, pool=pool), events
        return replace(s, pool=pool, phase=Phase.GODS, turn=(s.challenger + 1) % n), events
    if isinstance(action, ChooseGod):
        _check_turn(s, action.player, "choosing a god", Phase.GODS)
        if action.god not in god_set(s.rules):
            raise UnknownGod(action.god)
        if action.god not in available_gods(s):
            raise GodUnavailable(action.god)
        me = action.player
        gods = (*s.gods[:me], action.god, *s.gods[me + 1 :])
        events = [GodChosen(me, action.god)]
        if me == s.challenger:
            return replace(s, gods=gods, phase=Phase.STARTER, turn=s.challenger), events
        return replace(s, gods=gods, turn=(me + 1) % n), events
    if isinstance(action, ChooseStarter):
        _check_turn(s, action.player, "choosing the starter", Phase.STARTER)
        if not 0 <= action.starter < n:
            raise NoSuchPlayer(action.starter)
        return replace(s, starter=action.starter, phase=Phase.PLACE, turn=action.starter), [
            StarterChosen(action.player, action.starter)
        ]
    if isinstance(action, PlaceWorker):
        _check_turn(s, action.player, "placing a worker", Phase.PLACE)
        me = action.player
        if not 0 <= action.cell < len(CELLS):
            raise NoSuchCell(action.cell)
        if s.occupant(action.cell) is not None:
            raise CellOccupied(action.cell)
        sex = action.sex if action.sex is not None else _next_sex(s, me)
        w = worker_of(me, sex)
        if s.workers[w] is not None:
            raise WorkerAlreadyPlaced(w)
        workers = (*s.workers[:w], action.cell, *s.workers[w + 1 :])
        nxt = replace(s, workers=workers)
        events = [WorkerPlaced(me, w, action.cell)]
        if nxt.workers[2 * me] is None or nxt.workers[2 * me + 1] is None:
            return nxt, events
        assert s.starter is not None
        following = (me + 1) % n
        if following != s.starter:
            return replace(nxt, turn=following), events
        return _start_turn(nxt, s.starter, events)
    if isinstance(action, Lose):
        _check_turn(s, action.player, "losing", Phase.PLAY)
        events = []
        out = _eliminate(s, action.player, "resigned", events)
        if out.phase is Phase.OVER:
            return out, events
        return _start_turn(out, _next_seat(out, action.player), events)
    if isinstance(action, Undo):
        _check_turn(s, action.player, "undo", Phase.PLAY)
        raise NothingToUndo("undo needs the Game, which keeps the turn's states")
    # Move, Build, Pass
    _check_turn(s, action.player, type(action).__name__.lower(), Phase.PLAY)
    if _stuck_waiting(s):
        raise MustLose(f"player {action.player} cannot complete a turn and must lose")
    if isinstance(action, Pass):
        if not _power(s, s.turn).options(s, s.turn)[2]:
            raise OutOfOrder("pass", "a move" if not s.steps else "a build")
        return _step(s, action)
    if isinstance(action, Move):
        _validate_move(s, action)
    else:
        _validate_build(s, action)
    nxt, events = _step(s, action)
    if not _finishes(nxt, s.turn, set()):
        raise DeadEnd(f"after {action} player {s.turn} could not complete the turn")
    return nxt, events


# ------------------------------------------------------------------------- façade


@dataclass(frozen=True, slots=True)
class GameRecord:
    """What replays a game: rules, challenger and every action applied (undos too)."""

    rules: Rules
    challenger: int
    actions: tuple[Action, ...] = field(default=())


class Game:
    """One game: the current :class:`GameState`, the action log, and undo.

    Read :attr:`state` and the queries; change the game only with :meth:`apply`, which
    returns the events to announce or raises a RuleError (the game is then unchanged).
    """

    def __init__(self, rules: Rules = Rules(), challenger: int = 0) -> None:  # noqa: B008
        self.rules = rules
        self.challenger = challenger
        self._state = new_game(rules, challenger)
        self._turn_states: list[GameState] = []  # states before each step of this turn
        self._log: list[Action] = []

    @property
    def state(self) -> GameState:
        return self._state

    @property
    def log(self) -> tuple[Action, ...]:
        return tuple(self._log)

    def record(self) -> GameRecord:
        return GameRecord(self.rules, self.challenger, tuple(self._log))

    # -- queries (see the functions of the same names)

    @property
    def phase(self) -> Phase:
        return self._state.phase

    @property
    def turn(self) -> int | None:
        """The seat that must act now, or None once the game is over."""
        return None if self._state.is_over else self._state.turn

    @property
    def is_over(self) -> bool:
        return self._state.is_over

    @property
    def winner(self) -> int | None:
        return self._state.winner

    def available_gods(self) -> tuple[str, ...]:
        return available_gods(self._state)

    def legal_actions(self) -> list[Action]:
        return legal_actions(self._state)

    def reachable_cells(self, player: int) -> dict[Cell, tuple[Cell, ...]]:
        return reachable_cells(self._state, player)

    def buildable_cells(self, player: int) -> dict[Cell, dict[Cell, tuple[int, ...]]]:
        return buildable_cells(self._state, player)

    def can_place_worker(self, player: int) -> bool:
        return can_place_worker(self._state, player)

    def can_pass(self, player: int) -> bool:
        return can_pass(self._state, player)

    def can_undo(self, player: int) -> bool:
        """Whether ``player`` may undo now: on turn, in play, with a step taken."""
        s = self._state
        return s.phase is Phase.PLAY and s.turn == player and bool(self._turn_states)

    def must_lose(self, player: int) -> bool:
        """Whether ``player`` is on turn and cannot complete it (only without
        auto-elimination: then Lose is their one action)."""
        s = self._state
        return s.phase is Phase.PLAY and s.turn == player and _stuck_waiting(s)

    # -- changing the game

    def apply(self, action: Action) -> list[Event]:
        """Apply ``action``: the events to announce, or a RuleError (nothing changed)."""
        before = self._state
        if isinstance(action, Undo):
            _check_turn(before, action.player, "undo", Phase.PLAY)
            if not self._turn_states:
                raise NothingToUndo("no step taken this turn")
            if action.all:
                target = self._turn_states[0]
                self._turn_states.clear()
            else:
                target = self._turn_states.pop()
            self._state = target
            self._log.append(action)
            return [Undone(action.player, action.all, changed_cells(before, target))]
        after, events = advance(before, action)
        if (
            isinstance(action, Move | Build)
            and after.phase is Phase.PLAY
            and after.turn == before.turn
        ):
            self._turn_states.append(before)
        else:
            self._turn_states.clear()
        self._state = after
        self._log.append(action)
        return events

    def apply_all(self, actions: Iterable[Action]) -> list[Event]:
        events: list[Event] = []
        for a in actions:
            events.extend(self.apply(a))
        return events


def replay(record: GameRecord) -> Game:
    """A new game with the record's actions applied (RuleError if one is illegal)."""
    game = Game(record.rules, record.challenger)
    game.apply_all(record.actions)
    return game
