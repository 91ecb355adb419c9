"""Reserved names on ``meeple serve``'s wire protocols (issue 32.6): a name an account
reserved at /account is refused to a Twente, Clarkson, AM27 and Spectrangle client with
the protocol's own answer, as on a cluster's edges; fail closed while the store cannot
be read; CMPN402 agents and the browser's signed-in seat keep their path."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.patience import PATIENCE, eventually
from tests.web.helpers import ServerFactory
from tests.web.test_accounts_seat import _create, _reply, _reserve, _ws

from meeple.clients.clarkson import ClarksonClient, NameRefused
from meeple.clients.spectrangle import SpectrangleClient, SpectrangleClientError
from meeple.clients.twente import TwenteClient, TwenteClientError
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.santorini.framing import AutoDecoder, Text
from meeple.protocols.santorini.messages import Info, Message, Ping, Register, decode
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.lobby.names import NameRegistry, StoreReservations, server_reservations
from meeple.server.store.database import Store, open_store
from meeple.server.store.journal import server_store
from meeple.web.accounts import Scrypt

WIRE = ("twente", "clarkson", "santorini", "spectrangle")
HOST = "127.0.0.1"


class Am27:
    """An AM27 client over a real socket: JSON lines out, the server's framing in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.decoder = AutoDecoder()
        self.pending: list[Message] = []

    @classmethod
    async def open(cls, server: MeepleServer) -> Am27:
        peer = cls(*await asyncio.open_connection(HOST, server.ports["santorini"]))
        await peer.next()  # SERVERSTATE
        return peer

    def send(self, message: Message) -> None:
        self.writer.write(message.encode().encode() + b"\n")

    async def next(self) -> Message:
        while True:
            while not self.pending:
                chunk = await asyncio.wait_for(self.reader.read(65536), PATIENCE)
                assert chunk, "connection closed"
                events = self.decoder.receive_data(chunk)
                self.pending += [decode(e.text) for e in events if isinstance(e, Text)]
            message = self.pending.pop(0)
            if not isinstance(message, Ping):
                return message

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


class SpectrangleLines:
    """A Spectrangle client that goes on after a refusal: raw lines over a real socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, server: MeepleServer) -> SpectrangleLines:
        return cls(*await asyncio.open_connection(HOST, server.ports["spectrangle"]))

    async def ask(self, line: str) -> str:
        self.writer.write(line.encode() + b"\n")
        answer = await asyncio.wait_for(self.reader.readline(), PATIENCE)
        return answer.decode().strip()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


async def _refused_everywhere(server: MeepleServer, name: str, *, nameless: bool = False) -> None:
    """``name`` is refused over each of the four protocols, each with its own answer;
    ``nameless``: no name at all can be given (a Clarkson client, whose default name is
    refused too, hears NOK and GOODBYE)."""
    port = server.ports
    with pytest.raises(TwenteClientError, match="E001"):
        await TwenteClient.connect(HOST, port["twente"], name)
    if nameless:  # the server's HELLO, then why, then GOODBYE, unasked
        reader, writer = await asyncio.open_connection(HOST, port["clarkson"])
        heard = await asyncio.wait_for(reader.read(), PATIENCE)
        writer.close()
        assert heard.startswith(b"HELLO ")
        assert heard.endswith(b"NOK no name can be given now: try again later\r\nGOODBYE\r\n")
    else:
        with pytest.raises(NameRefused):
            await ClarksonClient.connect(HOST, port["clarkson"], name)
    am27 = await Am27.open(server)
    am27.send(Register(name, 2, False))
    assert await am27.next() == Info(name, "NICKNAME")
    await am27.close()
    with pytest.raises(SpectrangleClientError, match="invalidName"):
        await SpectrangleClient.connect(HOST, port["spectrangle"], name)
    assert name not in server.services.names  # every claim given back


async def _allowed_everywhere(server: MeepleServer, name: str) -> None:
    """``name`` (one protocol at a time) is welcomed over each of the four."""
    port = server.ports
    twente = await TwenteClient.connect(HOST, port["twente"], name)
    await twente.close()
    await eventually(lambda: name not in server.services.names, "twente's name freed")
    clarkson = await ClarksonClient.connect(HOST, port["clarkson"], name)
    await clarkson.close()
    await eventually(lambda: name not in server.services.names, "clarkson's name freed")
    spectrangle = await SpectrangleClient.connect(HOST, port["spectrangle"], name)
    await spectrangle.close()
    await eventually(lambda: name not in server.services.names, "spectrangle's name freed")
    am27 = await Am27.open(server)
    am27.send(Register(name, 2, False))
    await eventually(lambda: name in server.services.names, f"AM27 registered as {name}")
    await am27.close()
    await eventually(lambda: name not in server.services.names, "AM27's name freed")


async def test_a_reserved_name_is_refused_to_every_wire_client(
    make_server: ServerFactory,
) -> None:
    """A name reserved at /account is refused in any case to a Twente (E001), Clarkson
    (NOK), AM27 (INFO NICKNAME) and Spectrangle (invalidName) client of meeple serve; a
    name nobody reserved is welcomed; the browser signed in as the name is seated."""
    server = await make_server(*WIRE)
    app = server.listeners["web"].app  # type: ignore[attr-defined]
    app.state.accounts.cost = Scrypt(n=2**8)
    session = await _reserve(server, "Ann", "correct horse")
    for name in ("Ann", "ANN", "aNn"):
        await _refused_everywhere(server, name)
    await _allowed_everywhere(server, "Anna")
    # The pages say so (they said wire clients could still connect under the name).
    async with httpx.AsyncClient(
        verify=False, base_url=f"http://{HOST}:{server.ports['web']}"
    ) as http:
        account = " ".join((await http.get("/account")).text.split())
        ratings = " ".join((await http.get("/ratings")).text.split())
    assert "Twente, Clarkson, AM27 and Spectrangle cannot take it" in account
    assert "refuses it to Twente, Clarkson, AM27 and Spectrangle clients" in ratings
    assert "does not stop a client" not in ratings
    # The browser's seat keeps its path: signed in, it plays as the name.
    owner = await _ws(server, session)
    await owner.send(_create("ann"))
    assert (await _reply(owner))["type"] == "seated"
    await owner.close()


async def test_the_connection_goes_on_after_a_refusal(make_server: ServerFactory) -> None:
    """Refused a reserved name, an AM27 and a Spectrangle client register another name on
    the same connection (Twente and Clarkson clients reconnect, as for a taken name)."""
    server = await make_server(*WIRE)
    _reserve_behind(server, "Zoe")
    am27 = await Am27.open(server)
    am27.send(Register("zoe", 2, False))
    assert await am27.next() == Info("zoe", "NICKNAME")
    assert (await am27.next()).TYPE.value == "SERVERSTATE"  # and it may register again
    am27.send(Register("Zed", 2, False))
    await eventually(lambda: server.services.names.holder("Zed") is not None, "Zed registered")
    await am27.close()
    lines = await SpectrangleLines.open(server)
    assert await lines.ask("connect ZOE") == "invalidName"
    assert await lines.ask("connect Zack") == "welcome"
    await lines.close()
    # A Clarkson client's default name (its address, §3.5) skips a reserved one.
    _reserve_behind(server, HOST)
    unnamed = await ClarksonClient.connect(HOST, server.ports["clarkson"])
    await eventually(lambda: server.services.names.holder(f"{HOST}-2") is not None, "<ip>-2")
    assert HOST not in server.services.names
    await unnamed.close()


async def test_fail_closed_while_the_reservations_are_unknown(make_server: ServerFactory) -> None:
    """While the reserved names cannot be told (never read), every new wire name is
    refused, the refused connections go on, and names come back with the check."""
    server = await make_server(*WIRE)
    names = server.services.names
    check = names.reserved_now
    names.reserved_now = StoreReservations().reserved  # not read: it raises
    await _refused_everywhere(server, "Bob", nameless=True)
    lines = await SpectrangleLines.open(server)
    assert await lines.ask("connect Bob") == "invalidName"
    names.reserved_now = check
    assert await lines.ask("connect Bob") == "welcome"  # the same connection
    await lines.close()
    await eventually(lambda: "Bob" not in server.services.names, "Bob freed")
    await _allowed_everywhere(server, "Bob")


async def test_reservations_are_read_at_start_and_kept_in_memory(
    tmp_path: Path, gcide: Lexicon, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted meeple serve refuses the names its database holds as reserved; a name
    is then checked without a read of the store (a claim never waits on the database)."""
    config = ServerConfig(database=str(tmp_path / "restart.sqlite3")).only("twente", "web")
    store = open_store(config.database)
    _add_account(store, "Dora")
    store.close()
    server = MeepleServer(config, rng=random.Random(3))
    server.services.lexicon = gcide
    await server.start()
    try:

        def unreadable(name: str) -> None:
            raise AssertionError("a name claim read the store")

        monkeypatch.setattr(server_store(server.services), "account", unreadable)
        with pytest.raises(TwenteClientError, match="E001"):
            await TwenteClient.connect(HOST, server.ports["twente"], "DORA")
        free = await TwenteClient.connect(HOST, server.ports["twente"], "Doris")
        await free.close()
    finally:
        await server.stop()


async def test_cmpn402_agents_and_bots_are_not_checked(make_server: ServerFactory) -> None:
    """The four dialects' ``claim_then`` is checked; ``claim`` (CMPN402 agents, server
    bots, the browser's seat after ``may_use``) is not, on meeple serve as on a cluster's
    edges (docs/web.md)."""
    server = await make_server("twente")
    _reserve_behind(server, "Agent")
    answers: list[bool] = []
    server.services.names.claim_then("AGENT", object(), answers.append)
    assert answers == [False]  # reserved_now is asked at once
    owner = object()
    assert server.services.names.claim("agent", owner)
    server.services.names.release("agent", owner)


async def test_a_later_check_that_fails_refuses() -> None:
    """The check a cluster edge uses (answered later) fails closed too: a check that
    raises, or a connection gone meanwhile, refuses the name and holds nothing."""

    async def down(name: str) -> bool:
        raise OSError("no store node answers")

    names = NameRegistry(reserved=down)
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    names.claim_then("Eve", object(), answer.set_result)
    assert "Eve" in names  # held while it is checked
    assert await asyncio.wait_for(answer, PATIENCE) is False
    assert "Eve" not in names

    async def free(name: str) -> bool:
        return False

    names.reserved = free
    owner = object()
    gone: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    names.claim_then("Eve", owner, gone.set_result)
    names.release("Eve", owner)  # its connection ended
    assert await asyncio.wait_for(gone, PATIENCE) is False
    assert "Eve" not in names
    await names.close()


def _reserve_behind(server: MeepleServer, name: str) -> None:
    """Reserve ``name`` as /account's reserve does, without the form: in the store and
    in the server's reserved names in memory."""
    _add_account(server_store(server.services), name)
    server_reservations(server.services).add(name)


def _add_account(store: Store, name: str) -> None:
    assert store.add_account(name, b"\0" * 32, b"\1" * 16, "scrypt:256:8:1")


# --- hypothesis over names ---------------------------------------------------------------

_NAME = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=20
)


_EXAMPLES = itertools.count()


def _cased(draw: st.DrawFn, name: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return "".join(c.swapcase() if f else c for c, f in zip(name, flips, strict=True))


@st.composite
def _asked(draw: st.DrawFn) -> tuple[str, str]:
    """A reserved name and a name asked for: the same in another casing, or another."""
    reserved = draw(_NAME)
    asked = draw(st.one_of(st.just(_cased(draw, reserved)), _NAME))
    return reserved, asked


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=_asked())
def test_hypothesis_a_name_is_refused_iff_its_casefold_is_reserved(
    tmp_path: Path, pair: tuple[str, str]
) -> None:
    """Over names (casings, other scripts): a claim is refused exactly when the name's
    casefold is a reserved name's (``Ann`` reserved refuses ``ANN``), and a refused name
    is not held."""
    reserved, asked = pair
    path = tmp_path / f"names-{next(_EXAMPLES)}.sqlite3"
    store = open_store(str(path))
    try:
        _add_account(store, reserved)

        reservations = StoreReservations.load(store)

        async def later(name: str) -> bool:
            return reservations.reserved(name)

        async def scenario(names: NameRegistry) -> bool:
            answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            owner = object()
            names.claim_then(asked, owner, answer.set_result)
            given_ = await asyncio.wait_for(answer, PATIENCE)
            assert (names.holder(asked) is owner) is given_
            await names.close()
            return given_

        free = asked.casefold() != reserved.casefold()
        # meeple serve's check (at once) and a cluster edge's kind (later): one answer.
        assert asyncio.run(scenario(NameRegistry(reserved_now=reservations.reserved))) is free
        assert asyncio.run(scenario(NameRegistry(reserved=later))) is free
    finally:
        store.close()
        path.unlink(missing_ok=True)
