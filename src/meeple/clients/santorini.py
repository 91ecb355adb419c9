"""An async AM27 client, and the bot behind ``meeple bot santorini``.

::

    client = await SantoriniClient.connect("127.0.0.1", 7778)
    await client.register("Alice", players=2, gods=False)
    async for message in client:        # every server message, in order
        if isinstance(message, Update) and client.my_turn(message):
            ...

The client reads either framing a server writes (the Java object stream of the
group's server and of meeple by default, or JSON lines), writes JSON lines, and
PINGs every half second as ERRATA asks (a silent client is dropped after 5 s). It
keeps what a player can know: the board from every ``boardUpdate`` (levels and
workers per cell), the players and their gods, and the last update.

The bot (:func:`play_santorini`) plays from the server's own option lists: it wins
when a reachable cell stands on level 3, otherwise climbs, builds where it can climb
next and not where an opponent could step onto level 3, and passes as soon as the
turn is complete. By default it plays with the engine helper's search player
(:class:`SearchPlayer` over :func:`meeple.ai.santorini.search_action`) and keeps the
simple policy (:func:`choose`) for the set-up and as the fallback. Given a ``level``
(easy, medium, hard: :data:`meeple.ai.santorini_search.LEVELS`) it plays with the
alpha-beta player instead, ``think_time`` seconds a turn. Every decision is computed
in a worker thread, so the client keeps PINGing while the bot thinks (ERRATA: 5 s of
silence is a disconnect).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from meeple.ai.santorini import search_action
from meeple.ai.santorini_search import AlphaBetaPlayer
from meeple.clients.connection import SessionClient
from meeple.clients.watch import (
    Expected,
    Patience,
    within,
)
from meeple.games import santorini as engine
from meeple.protocols.santorini import messages
from meeple.protocols.santorini.events import ConnectionClosed, Ignored, Rejected
from meeple.protocols.santorini.session import (
    CLIENT_SENDS,
    DEFAULT_PING_INTERVAL,
    ClientEvent,
    ClientSession,
)
from meeple.protocols.santorini.session import State as ClientState

__all__ = [
    "GameResult",
    "SantoriniClient",
    "SantoriniClientError",
    "SearchPlayer",
    "choose",
    "play_santorini",
]

log = logging.getLogger(__name__)

MAX_SEARCH_MOVES = 3  # moves in one turn after which the search player stops planning
# How long the bot waits for the server to answer a command of its turn before it takes
# the command as ignored and chooses again from the last update (issue 22): the
# group's server ignores an illegal move without a word (ERRATA).
ANSWER_TIMEOUT = 5.0
# Commands a server answers at once: GODINIT with GODLISTMESSAGE or PLAYERSMESSAGE,
# CHOSESTARTER and the steps of a turn with UPDATE (or INFO).
_ANSWERED = (
    messages.GodInit,
    messages.ChooseStarter,
    messages.WorkerInit,
    messages.Move,
    messages.Build,
    messages.Pass,
)


class SantoriniClientError(Exception):
    """The connection ended, or the server would not let us in."""


class SantoriniClient(SessionClient[ClientEvent, messages.ServerMessage]):
    """One connection to an AM27 server. Create it with :meth:`connect`."""

    ERROR = SantoriniClientError
    LOGGER = log
    session: ClientSession

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        patience: Patience | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.ping_interval = ping_interval
        self._pinger: asyncio.Task[None] | None = None
        super().__init__(reader, writer, patience=patience, say=say)

    def _setup(self) -> None:
        self.session = ClientSession()
        self._pending = []
        self.nickname = ""
        self.server_state: messages.ServerState | None = None
        self.players: dict[str, str] = {}  # nickname -> god
        self.board: dict[messages.Cell, messages.CellState] = {}
        self.last_update: messages.Update | None = None
        self.last_info: messages.Info | None = None
        self.moves_this_turn = 0  # our MOVEs since our turn began (gods may allow more)
        self.steps_this_turn = 0  # our MOVEs and BUILDs since our turn began
        self.challenger = ""
        self.refusals = 0  # INFO replies to our commands so far
        # The last command of ours in a turn that the server has not answered yet, and
        # those of this turn it never answered (issue 22: a server may ignore a command
        # without a word; the bot times out and chooses again without them).
        self.awaiting: messages.ClientMessage | None = None
        self.unanswered: set[messages.ClientMessage] = set()
        # The last GODLISTMESSAGE, PLAYERSMESSAGE or UPDATE: what a bot re-reads when
        # the server does not answer it.
        self.last_prompt: messages.GodList | messages.Players | messages.Update | None = None

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        *,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        patience: Patience | None = None,
        say: Callable[[str], None] | None = None,
        name: str = "",
    ) -> SantoriniClient:
        """Connect and start pinging; the server's SERVERSTATE is the first message.
        ``name`` only labels the log lines until REGISTER sets the nickname."""
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer, ping_interval=ping_interval, patience=patience, say=say)
        client.unreadable.who = name
        client._pinger = asyncio.get_running_loop().create_task(client._ping_forever())
        return client

    async def _ping_forever(self) -> None:
        with contextlib.suppress(Exception):
            while not self._writer.is_closing():
                self._writer.write(self.session.send(messages.Ping("AIping")))
                await asyncio.sleep(self.ping_interval)

    # --- actions ------------------------------------------------------------------------

    async def register(
        self, nickname: str, players: int | None = None, gods: bool | None = None
    ) -> None:
        """REGISTER (A) with ``players`` and ``gods``, or (B) without them."""
        self.nickname = nickname
        await self.send(
            messages.Register(nickname, players, None if players is None else bool(gods))
        )

    async def send(self, message: messages.ClientMessage) -> None:
        data = self.session.send(message)
        if isinstance(message, messages.Move):
            self.moves_this_turn += 1
        if isinstance(message, messages.Move | messages.Build):
            self.steps_this_turn += 1
        elif isinstance(message, messages.Pass):
            self.moves_this_turn = self.steps_this_turn = 0
        if isinstance(message, _ANSWERED):
            self.awaiting = message
        self._stopwatch.restart()
        self._writer.write(data)
        await self._writer.drain()

    def unanswered_command(self) -> messages.ClientMessage | None:
        """Give up waiting for the answer to :attr:`awaiting` (the server ignored it):
        it counts as not sent, and joins :attr:`unanswered` for the rest of the turn.
        Returns it (None if nothing was awaited)."""
        message, self.awaiting = self.awaiting, None
        if message is None:
            return None
        self.unanswered.add(message)
        if isinstance(message, messages.Move):
            self.moves_this_turn -= 1
        if isinstance(message, messages.Move | messages.Build):
            self.steps_this_turn -= 1
        return message

    def may_send(self, message: messages.ClientMessage) -> bool:
        """Whether the session allows ``message`` now. False once a server message we
        already read moved the session on (an ENDGAME behind the UPDATE we answer)."""
        return message.TYPE in CLIENT_SENDS[self.session.state]

    async def send_if_allowed(self, message: messages.ClientMessage) -> bool:
        """Send ``message`` unless the server has moved on or hung up; say whether sent.

        A decision and the server's message can cross on the wire (the server ends
        the game while the bot thinks about its LOSE): that is a race, not a bug, so
        the stale command is dropped and the caller reads on to the result.
        """
        if not self.may_send(message):
            log.info(
                "%s: %s dropped, the session is already %s",
                self.nickname,
                message.TYPE.value,
                self.session.state.name,
            )
            return False
        try:
            await self.send(message)
        except ConnectionError as exc:
            log.info("%s: %s not sent, connection gone: %s", self.nickname, message.TYPE.value, exc)
            return False
        return True

    async def close(self) -> None:
        if self._pinger is not None:
            self._pinger.cancel()
        await super().close()

    def my_turn(self, update: messages.Update) -> bool:
        """Whether ``update`` asks us to act (ERRATA: off turn, maps empty, flags false)."""
        return update.player == self.nickname

    # --- receiving ----------------------------------------------------------------------

    @property
    def expected(self) -> Expected | None:
        """What the server owes us now: SERVERSTATE on a new connection; the game that
        waits for players after REGISTER (notices only: a table fills when it fills)."""
        if self._pending:
            return None
        state = self.session.state
        if state is ClientState.CONNECTED and self.server_state is None:
            return Expected("the server's SERVERSTATE")
        if state is ClientState.REGISTERED:
            return Expected("a game after our REGISTER", owed=False)
        return None

    def _who(self) -> str:
        return self.nickname

    def _take(self, event: ClientEvent, data: bytes) -> messages.ServerMessage | None:
        # What the client knows is tracked as each message arrives (a ping is answered
        # by the keep-alive, never handed out).
        if isinstance(event, Rejected):
            self._note(f"message ({event.reason.split(':')[0]})", event.reason, data)
            return None
        if isinstance(event, Ignored):
            self._note(event.message.TYPE.value, event.reason, data)
            return None
        if isinstance(event, ConnectionClosed):
            return None
        self._track(event)
        return None if isinstance(event, messages.Ping) else event

    def _track(self, message: messages.ServerMessage) -> None:
        if not isinstance(message, messages.Ping):
            self.awaiting = None  # answered (or overtaken): the server has spoken
        if isinstance(message, messages.EndGame) or (
            isinstance(message, messages.Update | messages.GodList)
            and message.player != self.nickname
        ):
            self.unanswered.clear()  # our turn is over: what was ignored may be fine later
        if isinstance(message, messages.GodList | messages.Players | messages.Update):
            self.last_prompt = message
        if isinstance(message, messages.ServerState):
            self.server_state = message
        elif isinstance(message, messages.Players):
            self.players = dict(message.players)
            self.challenger = message.player
            self.board = {}
        elif isinstance(message, messages.Update):
            if message.player != self.nickname:
                self.moves_this_turn = self.steps_this_turn = 0
            for c, state in message.board:
                self.board[c] = state
            self.last_update = message
        elif isinstance(message, messages.Info):
            self.last_info = message
        elif isinstance(message, messages.GodList) and not self.players:
            self.board = {}

    def level(self, c: messages.Cell) -> int:
        """The height of ``c`` (4: a dome)."""
        state = self.board.get(c)
        return state.levels[0] if state and state.levels else 0


# --- the bot ------------------------------------------------------------------------------


@dataclass
class GameResult:
    """How one game ended for the bot: the winner (None: someone dropped) and who."""

    winner: str | None
    ended_by: str
    turns: int = 0
    refusals: int = 0
    gods: dict[str, str] = field(default_factory=dict)


def _neighbours(c: messages.Cell) -> list[messages.Cell]:
    return [
        messages.Cell(c.row + dr, c.column + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= c.row + dr < 5 and 0 <= c.column + dc < 5
    ]


def choose(
    client: SantoriniClient, update: messages.Update, rng: random.Random
) -> messages.ClientMessage | None:
    """The bot's next command for an UPDATE naming it (None: nothing to do)."""
    me = client.nickname
    if update.can_place_worker:
        mine = [s.sex for s in client.board.values() if s.owner == me]
        sex = "F" if "M" in mine else "M"
        free = [
            messages.Cell(r, c)
            for r in range(5)
            for c in range(5)
            if client.board.get(messages.Cell(r, c), messages.CellState((0,))).owner is None
        ]
        free = [c for c in free if messages.WorkerInit(me, c, sex) not in client.unanswered]
        if not free:
            return None
        free.sort(key=lambda x: (abs(x.row - 2) + abs(x.column - 2), rng.random()))
        return messages.WorkerInit(me, free[0], sex)
    # Only what the update lists (issue 22): the server knows the gods' restrictions
    # (Athena) that the board does not show; and nothing the server ignored this turn.
    ignored = client.unanswered
    moves = [
        (w, d)
        for w, cells in update.reachable
        for d in cells
        if messages.Move(me, w, d) not in ignored
    ]
    builds = [
        (w, c, lv)
        for w, options in update.buildable
        for c, levels in options
        for lv in levels
        if messages.Build(me, w, c, lv) not in ignored
    ]
    if client.moves_this_turn and builds:
        moves = [(w, d) for w, d in moves if client.level(d) == 3 and client.level(w) == 2]
    if moves:
        for w, d in moves:
            if client.level(d) == 3 and client.level(w) == 2:
                return messages.Move(me, w, d)  # a win
        if not update.can_pass:
            w, d = max(moves, key=lambda wd: (client.level(wd[1]), rng.random()))
            return messages.Move(me, w, d)
    if update.can_pass and messages.Pass(me) not in ignored:
        return messages.Pass(me)
    if builds:
        rivals = [c for c, s in client.board.items() if s.owner not in (None, me)]

        def score(b: tuple[messages.Cell, messages.Cell, int]) -> tuple[int, float]:
            w, c, level = b
            danger = level == 3 and any(
                client.level(r) >= 2 and c in _neighbours(r) for r in rivals
            )
            climb = level <= client.level(w) + 1 and level < 4
            blocks = level == 4 and any(
                client.level(r) >= 2 and c in _neighbours(r) for r in rivals
            )
            return (-3 * danger + 2 * blocks + climb, rng.random())

        w, c, level = max(builds, key=score)
        return messages.Build(me, w, c, level)
    return messages.Lose(me)  # on turn with no option at all: §4.2.6


def listed(update: messages.Update, message: messages.ClientMessage) -> bool:
    """Whether ``update`` offers ``message``: the server's lists, not our reading of the
    rules, say what is legal (gods such as Athena restrict what the board allows)."""
    if isinstance(message, messages.Move):
        return any(
            w == message.source and message.destination in cells for w, cells in update.reachable
        )
    if isinstance(message, messages.Build):
        return any(
            w == message.source and c == message.destination and message.level in levels
            for w, options in update.buildable
            for c, levels in options
        )
    if isinstance(message, messages.Pass):
        return update.can_pass
    if isinstance(message, messages.WorkerInit):
        return update.can_place_worker
    return True  # LOSE is always ours to send


def _no_step_up(client: SantoriniClient, update: messages.Update) -> bool:
    """True when the board has a step up for one of our listed workers (a free cell one
    level higher next to it) but the update lists none: an opponent's Athena moved up."""
    if not update.reachable:
        return False
    possible = listed_up = False
    for w, cells in update.reachable:
        here = client.level(w)
        listed_up = listed_up or any(client.level(c) == here + 1 for c in cells)
        for n in _neighbours(w):
            state = client.board.get(n)
            free = state is None or state.owner is None
            possible = possible or (free and client.level(n) == here + 1 and here + 1 < 4)
    return possible and not listed_up


class SearchPlayer:
    """The engine helper's search player (:func:`meeple.ai.santorini.search_action`) on
    the wire: at the start of each of our turns it rebuilds the position from what the
    client knows (board, workers, gods, seats in PLAYERSMESSAGE order) and, step by step,
    advances its own copy with the steps it sends. Whatever it cannot judge (set-up,
    a position it cannot rebuild, a step the server refused) goes to :func:`choose`.

    What the wire does not carry is read from the update: whether an Athena opponent
    moved up last turn shows as no step up in our reachable cells where the board has
    one (issue 22). And every step the search picks must be one the update lists
    (a move in ``reachableCells``, a build in ``buildableCells``, a pass only with
    ``canPass``); one that is not, and any turn in which the server ignored or refused
    a step, goes to the server's own option lists (:func:`choose`).
    """

    def __init__(self, width: int = 6, player: AlphaBetaPlayer | None = None) -> None:
        self.width = width
        self.player = player  # None: the two-ply search_action
        self._state: engine.GameState | None = None
        self._refusals_seen = 0

    def __call__(
        self, client: SantoriniClient, update: messages.Update, rng: random.Random
    ) -> messages.ClientMessage | None:
        if update.can_place_worker or not client.players:
            return choose(client, update, rng)
        refused = client.refusals != self._refusals_seen
        self._refusals_seen = client.refusals
        if client.moves_this_turn == 0 and client.steps_this_turn == 0:
            self._state = self._position(client)
        if client.moves_this_turn >= MAX_SEARCH_MOVES:
            # Re-planning after each step can walk in circles (Triton may move on and
            # on along the perimeter): from here the simple policy builds.
            self._state = None
        if self._state is None or refused or client.unanswered:
            self._state = None
            return choose(client, update, rng)
        try:
            if self.player is not None:
                action = self.player.choose(self._state, rng)
            else:
                action = search_action(self._state, rng, width=self.width)
            message = self._to_wire(client, action)
            if message is not None and not listed(update, message):
                log.info("%s: the search's %s is not in the update", client.nickname, message)
                message = None
            if message is not None:
                self._state = engine.advance(self._state, action)[0]
        except (ValueError, engine.RuleError):
            message = None
        if message is None:
            self._state = None
            return choose(client, update, rng)
        return message

    def _position(self, client: SantoriniClient) -> engine.GameState | None:
        seats = list(client.players)
        if client.nickname not in seats or not 2 <= len(seats) <= 3:
            return None
        n = len(seats)
        gods_on = any(g != "Atheist" for g in client.players.values())
        workers: list[int | None] = [None] * (2 * n)
        levels = [0] * 25
        domes = [False] * 25
        for c, state in client.board.items():
            at = engine.cell(c.row, c.column)
            top = state.levels[0] if state.levels else 0
            domes[at] = top == 4
            levels[at] = state.levels[1] if top == 4 and len(state.levels) > 1 else top
            levels[at] = min(levels[at], 3)
            if state.owner in seats:
                sex = engine.Sex(state.sex or "M")
                workers[engine.worker_of(seats.index(state.owner), sex)] = at
        alive = tuple(any(workers[2 * i + k] is not None for k in (0, 1)) for i in range(n))
        gods = tuple(None if g == "Atheist" else g for g in client.players.values())
        if any(g is not None and g not in engine.GODS for g in gods):
            return None
        me = seats.index(client.nickname)
        blocked_up = client.last_update is not None and _no_step_up(client, client.last_update)
        moved_up = tuple(blocked_up and g == "Athena" and i != me for i, g in enumerate(gods))
        rules = engine.Rules(players=n, gods=gods_on, auto_eliminate=False)
        return engine.GameState(
            rules=rules,
            challenger=seats.index(client.challenger) if client.challenger in seats else 0,
            phase=engine.Phase.PLAY,
            turn=me,
            gods=gods,
            starter=me,
            levels=tuple(levels),
            domes=tuple(domes),
            workers=tuple(workers),
            alive=alive,
            moved_up=moved_up,
        )

    def _to_wire(
        self, client: SantoriniClient, action: engine.Action
    ) -> messages.ClientMessage | None:
        me = client.nickname

        def wire(c: int) -> messages.Cell:
            row, column = engine.coordinates(c)
            return messages.Cell(row, column)

        if isinstance(action, engine.Move):
            return messages.Move(me, wire(action.src), wire(action.dst))
        if isinstance(action, engine.Build):
            return messages.Build(me, wire(action.src), wire(action.dst), action.level)
        if isinstance(action, engine.Pass):
            return messages.Pass(me)
        if isinstance(action, engine.Lose):
            return messages.Lose(me)
        return None


def _chooser(
    level: str | None = None, think_time: float | None = None
) -> Callable[[SantoriniClient, messages.Update, random.Random], messages.ClientMessage | None]:
    """The search player (falling back to :func:`choose`): the two-ply one, or with a
    ``level`` the alpha-beta player on the monotonic clock."""
    if level is None:
        return SearchPlayer()
    player = AlphaBetaPlayer.at_level(level, clock=time.monotonic, think_time=think_time)
    return SearchPlayer(player=player)


async def play_santorini(
    host: str,
    port: int,
    name: str,
    *,
    players: int | None = 2,
    gods: bool = False,
    games: int = 1,
    seed: int | None = None,
    ping_interval: float = DEFAULT_PING_INTERVAL,
    search: bool = True,
    answer_timeout: float = ANSWER_TIMEOUT,
    level: str | None = None,
    think_time: float | None = None,
    pace: float | Callable[[], float] = 0.0,
    patience: Patience | None = None,
) -> list[GameResult]:
    """Connect, play ``games`` games in a row on one connection, return how each ended.

    It registers with REGISTER (A) for ``players`` and ``gods``, or with ``players``
    None with REGISTER (B): the game that waits for players, if any (spec §2.3).

    ``level`` picks the alpha-beta player (``think_time`` overrides its seconds per
    turn); without it the two-ply search player plays (``search=False``: the simple
    policy). Raise :class:`SantoriniClientError` if the server closes the connection
    before ``games`` games have ended, saying why when the server said so (``open:
    false``). A command of ours that the server does not answer within
    ``answer_timeout`` seconds counts as ignored: the bot re-reads the last
    GODLISTMESSAGE, PLAYERSMESSAGE or UPDATE and chooses again without it. ``pace``:
    seconds the bot waits before each command of its turn, or a function that says how
    many each time (a game that must last until a test has killed its server), without
    using the CPU meanwhile.

    After its own LOSE (§4.2.6: the player leaves the game) the bot waits at most
    ``answer_timeout`` for the ENDGAME that meeple's server sends; a server that sends
    the loser none (the spec does not ask for one) ends the game for the bot all the
    same (a result with no winner, ``ended_by`` the bot), and a next game is played on
    a fresh connection. ``patience`` says when the bot reports a wait on a server
    that owes an answer, and its clock runs every wait of the bot (issue 31).
    """
    rng = random.Random(seed)
    chooser = _chooser(level, think_time) if search else choose
    patience = patience or Patience()
    clock = patience.clock
    client = await SantoriniClient.connect(
        host, port, ping_interval=ping_interval, patience=patience, name=name
    )
    results: list[GameResult] = []
    current = GameResult(None, "")
    lost_until: float | None = None  # our LOSE sent: the game is over for us by then

    async def respond(prompt: messages.GodList | messages.Players | messages.Update) -> None:
        """Answer a message that may ask us to act, with nothing the server ignored."""
        nonlocal lost_until
        if lost_until is not None:
            return  # out of the game (§4.2.6): nothing of it asks us to act any more
        if current.refusals > 50:
            raise SantoriniClientError("the server keeps refusing our moves")
        me = client.nickname
        command: messages.ClientMessage | None = None
        if isinstance(prompt, messages.GodList) and prompt.player == me:
            offered = [messages.GodInit(me, g.name) for g in prompt.gods]
            fresh = [c for c in offered if c not in client.unanswered]
            command = rng.choice(fresh or offered) if offered else None
        elif isinstance(prompt, messages.Players) and prompt.player == me:
            starters = [messages.ChooseStarter(me, me)] + [
                messages.ChooseStarter(me, n) for n, _ in prompt.players if n != me
            ]
            command = next((c for c in starters if c not in client.unanswered), starters[0])
        elif isinstance(prompt, messages.Update) and client.my_turn(prompt):
            wait = pace() if callable(pace) else pace
            if wait:
                await asyncio.sleep(wait)
            # In a worker thread: the pinger goes on while the bot thinks.
            command = await asyncio.to_thread(chooser, client, prompt, rng)
        sent = command is not None and await client.send_if_allowed(command)
        if sent and isinstance(command, messages.Pass):
            current.turns += 1
        if sent and isinstance(command, messages.Lose):
            lost_until = clock.now() + answer_timeout

    async def leave_lost_game(why: str) -> bool:
        """End the game we left with LOSE; True when that was the last game to play."""
        nonlocal client, current, lost_until
        log.warning("%s: %s after our LOSE: the game is over for us (AM27 §4.2.6)", name, why)
        lost_until = None
        current.ended_by = name
        results.append(current)
        current = GameResult(None, "")
        if len(results) >= games:
            return True
        # Our session is still in that game as far as the server said: a fresh
        # connection (and REGISTER on its SERVERSTATE) for the next one.
        await client.close()
        if summary := client.unreadable.summary():
            log.warning("%s: %s", name, summary)
        client = await SantoriniClient.connect(
            host, port, ping_interval=ping_interval, patience=patience, name=name
        )
        return False

    try:
        while True:
            if lost_until is not None:
                timeout: float | None = max(0.0, lost_until - clock.now())
            else:
                timeout = answer_timeout if client.awaiting is not None else None
            try:
                message = await within(client.receive(), timeout, clock)
            except TimeoutError:
                if lost_until is not None:
                    if await leave_lost_game(f"no ENDGAME in {answer_timeout:g} s"):
                        break
                    continue
                ignored = client.unanswered_command()
                log.warning("%s: no answer to %s in %g s", name, ignored, answer_timeout)
                current.refusals += 1
                if client.last_prompt is not None:
                    await respond(client.last_prompt)  # re-read the last prompt
                continue
            except SantoriniClientError:
                if lost_until is not None:
                    if await leave_lost_game("the server closed the connection"):
                        break
                    continue
                if len(results) >= games:
                    break
                raise SantoriniClientError(_closed_early(client, len(results), games)) from None
            if isinstance(message, messages.ServerState):
                if len(results) >= games:
                    break
                if not message.open:
                    # §2.1: open is whether the client has been accepted. It has not:
                    # register only if a later SERVERSTATE opens; a close is a failure.
                    log.warning("%s: the server is not open to new players", name)
                elif client.session.state.value == "connected":
                    await client.register(name, players, gods)
            elif isinstance(message, messages.Info):
                if message.information == "NICKNAME":
                    raise SantoriniClientError(f"nickname {name!r} refused")
                current.refusals += 1
                client.refusals += 1
            elif isinstance(message, messages.GodList | messages.Players | messages.Update):
                if isinstance(message, messages.Players):
                    current.gods = dict(message.players)
                await respond(message)
            elif isinstance(message, messages.EndGame):
                lost_until = None
                current.winner = message.player if message.is_winner else None
                current.ended_by = message.player
                results.append(current)
                current = GameResult(None, "")
    finally:
        await client.close()
        if summary := client.unreadable.summary():
            log.warning("%s: %s", name, summary)
    return results


def _closed_early(client: SantoriniClient, played: int, games: int) -> str:
    """Why the bot stops: the connection closed after ``played`` of ``games`` games."""
    state = client.server_state
    if state is not None and not state.open and client.session.nickname is None:
        return "the server is not open to new players (SERVERSTATE open: false) and closed"
    return f"the server closed the connection after {played} of {games} games"
