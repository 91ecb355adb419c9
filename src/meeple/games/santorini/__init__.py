"""Santorini with gods as a pure library: set-up, turns, god powers, queries, undo, replay.

How a caller (a server room, a bot, a test) uses it
===================================================

Seats are ints ``0..players-1``; cells are ints ``row * 5 + column`` (rows, columns
0–4; :func:`cell` / :func:`coordinates` convert); a build's level is 1–3 for a block
and 4 (:data:`DOME`) for a dome; workers are ``seat * 2`` (``"M"``) and ``seat * 2 + 1``
(``"F"``).

1. Create: ``game = Game(Rules(players=2, gods=True), challenger=c)``. The caller
   picks the challenger (AM27's server: the last player to join). ``Rules.god_set``
   restricts the gods (default: every name in :data:`GODS`);
   ``Rules.challenger_picks_pool=False`` lets the players choose from the whole set
   instead of a pool the challenger offers; ``Rules.auto_eliminate=False`` makes a
   stuck player send :class:`Lose` instead of losing by itself.
2. Set-up, phase by phase (``game.phase``; ``game.turn`` is who must act):

   - ``Phase.POOL`` (gods, pool on): the challenger applies :class:`OfferGod` once per
     player; ``game.available_gods()`` is what can still be offered.
   - ``Phase.GODS``: from the seat after the challenger round to the challenger, each
     applies :class:`ChooseGod` (AM27 ``GODINIT``); ``game.available_gods()`` is the
     ``GODLISTMESSAGE`` list. The challenger takes the last one.
   - ``Phase.STARTER``: the challenger applies :class:`ChooseStarter` (``CHOSESTARTER``).
     A game without gods starts here.
   - ``Phase.PLACE``: from the starter round the table each player applies two
     :class:`PlaceWorker` (``WORKERINIT``); ``game.can_place_worker(seat)``.
3. Play (``Phase.PLAY``): the player on turn applies :class:`Move`, :class:`Build`
   (``level`` = what the cell becomes) and finally :class:`Pass` (``PASS``) once
   ``game.can_pass(seat)``; optional god steps (Artemis' second move, Demeter's second
   build, Prometheus' build before moving, ...) are just further moves and builds
   offered before the pass. :class:`Undo` (``all`` for the whole turn) while
   ``game.can_undo(seat)``; :class:`Lose` gives up (``LOSE``). A winning move ends the
   game at once (``Phase.OVER``, ``game.winner``); a player who cannot complete a turn
   loses at its start (event :class:`PlayerLost`); with three players the rest play on.
4. Queries for the update message: ``game.reachable_cells(seat)`` →
   ``{worker_cell: (cells...)}``, ``game.buildable_cells(seat)`` →
   ``{worker_cell: {cell: (levels...)}}`` (both list every worker of the seat, with empty
   entries when that kind of step is not next; ``{}`` off turn), ``can_place_worker``,
   ``can_pass``, ``can_undo``; :func:`changed_cells` (before, after) for a
   ``boardUpdate``; ``game.state`` (a frozen :class:`GameState`) for the board:
   ``levels[c]``, ``domes[c]``, ``occupancy()[c]``.
5. ``game.apply(action)`` returns the events (:data:`Event`) or raises a
   :class:`RuleError` subclass naming the broken rule, leaving the game unchanged.
   ``game.record()`` and :func:`replay` rebuild a game from its action log.

:func:`from_diagram` sets up a position from text (tests, tools); :func:`diagram`
prints one. The same rules work on bare values: :func:`new_game`, :func:`advance`,
:func:`legal_actions`, :func:`legal_steps`, :func:`turns` (every way to complete the
turn, what the AI searches with).

Gods are rule objects (:mod:`meeple.games.santorini.gods`): the basic rules are the
:class:`Power` base class and each god overrides what its card changes. Steps offered
are only those after which the turn can still be completed.
"""

from __future__ import annotations

from meeple.games.santorini import board, errors, game, gods, state
from meeple.games.santorini.board import *  # noqa: F403
from meeple.games.santorini.diagram import diagram, from_diagram
from meeple.games.santorini.errors import *  # noqa: F403  (the error tree is public as a whole)
from meeple.games.santorini.game import *  # noqa: F403
from meeple.games.santorini.gods import *  # noqa: F403
from meeple.games.santorini.state import *  # noqa: F403

__all__ = [
    "diagram",
    "errors",
    "from_diagram",
    *board.__all__,
    *errors.__all__,
    *game.__all__,
    *gods.__all__,
    *state.__all__,
]
