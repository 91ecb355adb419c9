"""A fast twin of the Santorini rules with gods, for the search (two players).

The engine (:mod:`meeple.games.santorini`) asks each god's :class:`Power` object which
step may come next and builds a frozen :class:`GameState` after every step; the search
needs the same turns thousands of times a second. :class:`GodTwin` gives them on plain
tuples for one pair of gods: every distinct way to complete the turn from a turn's start,
each with the node after it, as the engine's :func:`~meeple.games.santorini.turns` does
(``tests/ai/test_santorini_twin.py`` proves the two agree on random positions with
random gods, hypothesis choosing them).

A node is ``(key, h, wk, turn, winner, mu)``:

- ``h`` per cell a *code*: 0–3 a level without a dome, 4 a complete tower (a dome on
  level 3), 5–7 a dome on level 0–2 (only Atlas builds those). Every code ≥ 4 is a
  dome, and a worker's step test ``h[d] > h[src] + 1`` already shuts out 5–7;
- ``wk`` the four workers' cells (seat 0's male, female, seat 1's male, female);
- ``turn`` the side to move, ``winner`` -1 while the game goes on;
- ``mu`` bit ``seat`` set when that seat moved a worker up in its last turn (Athena);
- ``key`` a Zobrist key of all of it that the search may read (``mu`` only for the
  Athena seat, the only one whose flag the rules read).

A move is the tuple of its steps as ints: a move ``src << 5 | dst``, a build
``1 << 15 | level << 10 | src << 5 | cell`` (``level`` as the engine names it, 4 a
dome); :meth:`GodTwin.route` turns it into the engine's actions.

As in the engine's ``turns``, a player left without a turn loses at its start; the twin
does not look ahead for that: a node without children is a loss for the side to move.
"""

from __future__ import annotations

from collections.abc import Sequence

from meeple.games.santorini.board import NEIGHBOURS, PERIMETER, behind
from meeple.games.santorini.game import Build, Move, Pass
from meeple.games.santorini.gods import GODS
from meeple.games.santorini.state import GameState, Phase

__all__ = [
    "BUILD_FLAG",
    "GodNode",
    "GodTwin",
    "TwinMove",
    "height_codes",
]

GodNode = tuple[int, tuple[int, ...], tuple[int, ...], int, int, int]
TwinMove = tuple[int, ...]

BUILD_FLAG = 1 << 15
_MASK = (1 << 64) - 1
_zstate = [0x7717A5]


def _z() -> int:
    """The next Zobrist key (splitmix64 from a fixed seed: the same keys every run)."""
    _zstate[0] = (_zstate[0] + 0x9E3779B97F4A7C15) & _MASK
    x = _zstate[0]
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


Z_CODE: tuple[tuple[int, ...], ...] = tuple(tuple(_z() for _h in range(8)) for _c in range(25))
Z_WORKER: tuple[tuple[int, ...], ...] = tuple(tuple(_z() for _c in range(25)) for _w in range(4))
Z_TURN: tuple[int, int] = (_z(), _z())
Z_ATHENA_UP = _z()
_Z_GOD: dict[tuple[int, str | None], int] = {}

_BEHIND: tuple[tuple[int, ...], ...] = tuple(
    tuple(-1 if d not in NEIGHBOURS[s] or (b := behind(s, d)) is None else b for d in range(25))
    for s in range(25)
)
_EDGE = PERIMETER


def _god_z(seat: int, god: str | None) -> int:
    k = _Z_GOD.get((seat, god))
    if k is None:
        k = _Z_GOD[(seat, god)] = _z()
    return k


def height_codes(s: GameState) -> tuple[int, ...]:
    """The twin's code of each cell of ``s`` (see the module's docstring)."""
    return tuple(
        (4 if lv == 3 else 5 + lv) if d else lv for lv, d in zip(s.levels, s.domes, strict=True)
    )


class GodTwin:
    """The turns of a two-player game between ``gods[0]`` and ``gods[1]`` (None: no
    god) on tuples. One object per pair; it holds no position."""

    def __init__(self, gods: Sequence[str | None]) -> None:
        if len(gods) != 2:
            raise ValueError("the twin plays two players")
        for g in gods:
            if g is not None and g not in GODS:
                raise ValueError(f"unknown god {g}")
        self.gods = (gods[0], gods[1])
        self.athena = gods.index("Athena") if "Athena" in gods else -1
        self.zgods = _god_z(0, gods[0]) ^ _god_z(1, gods[1])

    # -- nodes

    @staticmethod
    def covers(s: GameState) -> bool:
        """Whether the twin plays ``s``: two players with gods (or none), in play at a
        turn's start, all four workers placed, players who cannot move lose by
        themselves (auto-elimination)."""
        return (
            s.players == 2
            and s.phase is Phase.PLAY
            and not s.steps
            and s.rules.auto_eliminate
            and all(at is not None for at in s.workers)
            and all(g is None or g in GODS for g in s.gods)
        )

    def node(self, s: GameState) -> GodNode:
        """The twin's node for ``s`` (which :meth:`covers` must accept)."""
        h = height_codes(s)
        wk = tuple(at for at in s.workers if at is not None)
        mu = (1 if s.moved_up[0] else 0) | (2 if s.moved_up[1] else 0)
        return (self.key(h, wk, s.turn, mu), h, wk, s.turn, -1, mu)

    def key(self, h: Sequence[int], wk: Sequence[int], turn: int, mu: int) -> int:
        """The Zobrist key of a position, computed from scratch."""
        k = Z_TURN[turn] ^ self.zgods
        for c in range(25):
            k ^= Z_CODE[c][h[c]]
        for w in range(4):
            k ^= Z_WORKER[w][wk[w]]
        if self.athena >= 0 and mu >> self.athena & 1:
            k ^= Z_ATHENA_UP
        return k

    @staticmethod
    def route(move: TwinMove, me: int, ended: bool) -> tuple[Move | Build | Pass, ...]:
        """The engine's actions of a twin move by seat ``me`` (a Pass last unless the
        game ended during the turn: a win, or Chronus' towers)."""
        out: list[Move | Build | Pass] = []
        for x in move:
            if x & BUILD_FLAG:
                out.append(Build(me, (x >> 5) & 31, x & 31, (x >> 10) & 7))
            else:
                out.append(Move(me, x >> 5, x & 31))
        if not ended:
            out.append(Pass(me))
        return tuple(out)

    # -- turns

    def children(self, node: GodNode) -> list[tuple[TwinMove, GodNode]]:
        """Every distinct way for the side to move to complete its turn, each with the
        node after it (the next player's turn, or the game won): the engine's
        ``turns``. An ended game has none."""
        key0, h0, wk0, me, winner, mu0 = node
        if winner != -1:
            return []
        god = self.gods[me]
        opp = 1 - me
        ogod = self.gods[opp]
        no_up = ogod == "Athena" and bool(mu0 >> opp & 1)
        no_down = ogod == "Hades"
        hera = ogod == "Hera"
        is_limus = ogod == "Limus"
        chronus = 1 if god == "Chronus" else 2 if ogod == "Chronus" else 0
        pan = god == "Pan"
        force = 1 if god == "Apollo" else 2 if god == "Minotaur" else 0
        atlas = god == "Atlas"
        zeus = god == "Zeus"
        second = {"Demeter": 1, "Hestia": 2, "Hephaestus": 3}.get(god or "", 0)
        athena = self.athena
        zt = Z_TURN[me] ^ Z_TURN[opp]
        ends: dict[tuple[tuple[int, ...], tuple[int, ...], int, int], tuple[TwinMove, GodNode]] = {}

        def moves_from(
            h: tuple[int, ...], wk: tuple[int, ...], i: int, not_to: int, not_up: bool
        ) -> list[tuple[int, tuple[int, ...], bool, bool, int]]:
            """(destination, workers after, moved up, wins, key change) for worker ``i``."""
            src = wk[i]
            hs = h[src]
            top = hs if (no_up or not_up) else hs + 1
            zw = Z_WORKER[i]
            out: list[tuple[int, tuple[int, ...], bool, bool, int]] = []
            for d in NEIGHBOURS[src]:
                hd = h[d]
                if hd > top or hd >= 4 or d == not_to or (no_down and hd < hs):
                    continue
                if d in wk:
                    v = wk.index(d)
                    if v >> 1 == me or not force:
                        continue
                    if force == 1:
                        to = src
                    else:
                        to = _BEHIND[src][d]
                        if to < 0 or h[to] >= 4 or to in wk:
                            continue
                    lw = list(wk)
                    lw[v] = to
                    lw[i] = d
                    nw = tuple(lw)
                    kd = zw[src] ^ zw[d] ^ Z_WORKER[v][d] ^ Z_WORKER[v][to]
                else:
                    nw = (*wk[:i], d, *wk[i + 1 :])
                    kd = zw[src] ^ zw[d]
                win = (hd == 3 and hs < 3) or (pan and hs - hd >= 2)
                if win and hera and d in _EDGE:
                    win = False
                out.append((d, nw, hd > hs, win, kd))
            return out

        def builds_at(
            h: tuple[int, ...], wk: tuple[int, ...], at: int
        ) -> list[tuple[int, int, int]]:
            """(cell, engine level, new code) of the builds of the worker on ``at``."""
            out: list[tuple[int, int, int]] = []
            limus: tuple[int, ...] = ()
            if is_limus:  # where Limus' workers stand now (a push may have moved one)
                limus = NEIGHBOURS[wk[2 * opp]] + NEIGHBOURS[wk[2 * opp + 1]]
            for c in NEIGHBOURS[at]:
                hc = h[c]
                if hc >= 4 or c in wk:
                    continue
                if hc == 3:
                    out.append((c, 4, 4))
                    continue
                if c in limus:
                    continue
                out.append((c, hc + 1, hc + 1))
                if atlas:
                    out.append((c, 4, 5 + hc))
            if zeus:
                hc = h[at]
                if hc < 3 and at not in limus:
                    out.append((at, hc + 1, hc + 1))
            return out

        def board_win(h: tuple[int, ...]) -> int:
            """Chronus' win after a build: the seat that won, or -1."""
            if chronus and h.count(4) >= 5:
                return me if chronus == 1 else opp
            return -1

        def end(
            h: tuple[int, ...],
            wk: tuple[int, ...],
            steps: TwinMove,
            up: bool,
            won: int,
            kd: int,
        ) -> None:
            mu = mu0
            if won == -1:
                mu = (mu | (1 << me)) if up else (mu & ~(1 << me))
            e = (h, wk, won, mu)
            if e in ends:
                return
            k = key0 ^ kd
            if won == -1:
                k ^= zt
                if athena == me and mu != mu0:
                    k ^= Z_ATHENA_UP
            ends[e] = (steps, (k, h, wk, me if won != -1 else opp, won, mu))

        def build_phase(
            h: tuple[int, ...], wk: tuple[int, ...], i: int, steps: TwinMove, up: bool, kd: int
        ) -> None:
            """The builds after the (last) move of worker ``i``, then the end."""
            at = wk[i]
            for c, level, code in builds_at(h, wk, at):
                nh = (*h[:c], code, *h[c + 1 :])
                st = (*steps, BUILD_FLAG | level << 10 | at << 5 | c)
                zc = Z_CODE[c]
                kd1 = kd ^ zc[h[c]] ^ zc[code]
                won = board_win(nh)
                if won != -1:
                    end(nh, wk, st, up, won, kd1)
                    continue
                end(nh, wk, st, up, -1, kd1)
                if second == 0:
                    continue
                if second == 3 and level >= 3:
                    continue
                for c2, level2, code2 in builds_at(nh, wk, at):
                    if second == 1 and c2 == c:
                        continue
                    if second == 2 and c2 in _EDGE:
                        continue
                    if second == 3 and (c2 != c or level2 == 4):
                        continue
                    nh2 = (*nh[:c2], code2, *nh[c2 + 1 :])
                    st2 = (*st, BUILD_FLAG | level2 << 10 | at << 5 | c2)
                    zc2 = Z_CODE[c2]
                    kd2 = kd1 ^ zc2[nh[c2]] ^ zc2[code2]
                    end(nh2, wk, st2, up, board_win(nh2), kd2)

        for i in (2 * me, 2 * me + 1):
            src = wk0[i]
            if ogod == "Hypnus" and h0[src] > h0[wk0[i ^ 1]]:
                continue  # Hypnus: the higher worker cannot move this turn
            starts: list[tuple[tuple[int, ...], TwinMove, bool, int]] = [(h0, (), False, 0)]
            if god == "Prometheus":
                for c, level, code in builds_at(h0, wk0, src):
                    nh = (*h0[:c], code, *h0[c + 1 :])
                    st: TwinMove = (BUILD_FLAG | level << 10 | src << 5 | c,)
                    kd = Z_CODE[c][h0[c]] ^ Z_CODE[c][code]
                    won = board_win(nh)
                    if won != -1:
                        end(nh, wk0, st, False, won, kd)
                    else:
                        starts.append((nh, st, True, kd))
            for h, pre, not_up, kd0 in starts:
                if god == "Triton":
                    self._triton(h, wk0, i, moves_from, build_phase, end)
                    continue
                for d, nw, up, win, kd in moves_from(h, wk0, i, -1, not_up):
                    st = (*pre, src << 5 | d)
                    kd ^= kd0
                    if win:
                        end(h, nw, st, up, me, kd)
                        continue
                    build_phase(h, nw, i, st, up, kd)
                    if god == "Artemis":
                        for d2, nw2, up2, win2, kd2 in moves_from(h, nw, i, src, False):
                            st2 = (*st, d << 5 | d2)
                            if win2:
                                end(h, nw2, st2, up or up2, me, kd ^ kd2)
                            else:
                                build_phase(h, nw2, i, st2, up or up2, kd ^ kd2)
        return list(ends.values())

    @staticmethod
    def _triton(h, wk, i, moves_from, build_phase, end) -> None:  # type: ignore[no-untyped-def]
        """Triton: moves on while it lands on the perimeter. Breadth first, the first
        route to each cell kept (as the engine's ``turns``: its record of whether the
        worker moved up is that route's)."""
        me = i >> 1
        src = wk[i]
        seen: set[int] = set()
        queue: list[tuple[tuple[int, ...], tuple[int, ...], bool]] = []
        zw = Z_WORKER[i]
        for d, nw, up, win, kd in moves_from(h, wk, i, -1, False):
            st: TwinMove = (src << 5 | d,)
            if win:
                end(h, nw, st, up, me, kd)
            elif d not in seen:
                seen.add(d)
                queue.append((nw, st, up))
        n = 0
        while n < len(queue):
            nw, st, up = queue[n]
            n += 1
            at = nw[i]
            if at in _EDGE:
                for d, nw2, up2, win, _kd in moves_from(h, nw, i, -1, False):
                    st2 = (*st, at << 5 | d)
                    if win:
                        end(h, nw2, st2, up or up2, me, zw[src] ^ zw[d])
                    elif d not in seen:
                        seen.add(d)
                        queue.append((nw2, st2, up or up2))
            build_phase(h, nw, i, st, up, zw[src] ^ zw[at])

    def can_win(self, h: Sequence[int], wk: Sequence[int], seat: int, mu: int) -> bool:
        """Whether ``seat``, on turn, has a winning first move: up onto level 3, or Pan's
        drop of two levels; through an opponent for Apollo and Minotaur; not where
        Athena's flag, Hypnus, Hades or Hera forbid it. True only when it does (a
        second move of Artemis or Triton is not looked at)."""
        god = self.gods[seat]
        opp = 1 - seat
        ogod = self.gods[opp]
        no_up = ogod == "Athena" and bool(mu >> opp & 1)
        pan = god == "Pan" and ogod != "Hades"
        if no_up and not pan:
            return False
        hera = ogod == "Hera"
        force = 1 if god == "Apollo" else 2 if god == "Minotaur" else 0
        for i in (2 * seat, 2 * seat + 1):
            src = wk[i]
            hs = h[src]
            if hs < 2 and not pan:
                continue
            if ogod == "Hypnus" and hs > h[wk[i ^ 1]]:
                continue
            for d in NEIGHBOURS[src]:
                hd = h[d]
                if hd >= 4:
                    continue
                if not ((hd == 3 and hs == 2 and not no_up) or (pan and hs - hd >= 2)):
                    continue
                if hera and d in _EDGE:
                    continue
                if d in wk:
                    v = wk.index(d)
                    if v >> 1 == seat or not force:
                        continue
                    if force == 2:
                        to = _BEHIND[src][d]
                        if to < 0 or h[to] >= 4 or to in wk:
                            continue
                return True
        return False
