"""`meeple play GAME`: the parser and the app it builds (running the app is tests/tui's job)."""

from __future__ import annotations

import pytest

from meeple.cli.main import build_parser
from meeple.cli.play import build_app
from meeple.tui.registry import GAMES, load
from meeple.tui.scrabble.app import ScrabbleApp
from meeple.tui.scrabble.cmpn402 import connect as cmpn402_connect
from meeple.tui.scrabble.twente import connect as twente_connect
from meeple.tui.spectrangle.adapter import connect as spectrangle_connect
from meeple.tui.spectrangle.app import SpectrangleApp


@pytest.mark.parametrize(
    ("argv", "app_class", "connector", "port"),
    [
        (["play", "scrabble"], ScrabbleApp, twente_connect, 7777),
        (["play", "spectrangle"], SpectrangleApp, spectrangle_connect, 4000),
        (["play", "scrabble", "--protocol", "cmpn402"], ScrabbleApp, cmpn402_connect, 8765),
        (
            ["play", "scrabble", "--protocol", "twente", "--port", "9"],
            ScrabbleApp,
            twente_connect,
            9,
        ),
    ],
)
def test_no_flag_is_needed_against_a_local_server(
    argv: list[str], app_class: type, connector: object, port: int
) -> None:
    """Defaults: 127.0.0.1, the protocol's default port, a two-player table."""
    app = build_app(build_parser().parse_args(argv))
    assert isinstance(app, app_class)
    assert app.connector is connector
    assert (app.options.host, app.options.port, app.options.players) == ("127.0.0.1", port, 2)
    assert app.options.name


def test_name_players_and_host_are_passed_on() -> None:
    """--name, --players and --host reach the connection options."""
    args = build_parser().parse_args(
        ["play", "scrabble", "--name", "Ann", "--players", "3", "--host", "10.0.0.2"]
    )
    options = build_app(args).options
    assert (options.name, options.players, options.host) == ("Ann", 3, "10.0.0.2")


def test_an_unknown_protocol_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Only the protocols a game has an adapter for are accepted."""
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["play", "spectrangle", "--protocol", "twente"])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_registered_reference_loads(game: str) -> None:
    """Each app and adapter named in the registry imports and is callable."""
    entry = GAMES[game]
    assert callable(load(entry.app))
    assert entry.default_protocol in entry.protocols
    for reference in entry.protocols.values():
        assert callable(load(reference))
