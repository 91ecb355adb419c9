"""What a ``meeple node`` imports before it is ready (issue 33: a node's start is most of
the cluster tests' CPU, and an operator's restart): its own command's module and not the
others' (the AI matches, the TUI, the ratings), and the wire schema without the bots'
players (an edge, or a rooms node with no bot seated, never loads ``meeple.ai``)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from meeple.cli.main import COMMAND_MODULES, COMMANDS, build_parser


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return set(out.split())


def test_every_command_is_added_by_the_module_the_table_names() -> None:
    """``COMMANDS`` names, for each command, the one module that adds it, and every
    command module is in it: a command looked up alone parses as with every module."""
    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(sub)
        added = set(sub.choices)
        assert added == {c for c, m in COMMANDS.items() if m == name}, name
    assert set(COMMANDS.values()) == set(COMMAND_MODULES)


@pytest.mark.parametrize(
    "argv",
    [
        ["node", "--roles", "edge,rooms", "--lease", "3"],
        ["--log-level", "DEBUG", "cluster", "down", "--dir", "x"],
        ["bot", "santorini", "--gods"],
    ],
)
def test_one_command_s_parser_reads_what_the_whole_parser_reads(argv: list[str]) -> None:
    """The parser of the command named alone gives the same arguments as every command's."""
    alone = build_parser(next(a for a in argv if a in COMMANDS)).parse_args(argv)
    whole = build_parser().parse_args(argv)
    assert vars(alone) == vars(whole)


def test_a_node_s_command_and_schema_load_no_other_command_and_no_bot_player() -> None:
    """What every node loads before it is ready: the node's command line and the
    schema's registry (which imports every role's messages)."""
    loaded = _modules_after(
        "from meeple.cli.main import COMMANDS, build_parser\n"
        "build_parser('node').parse_args(['node', '--roles', 'edge'])\n"
        "import meeple.node.node\n"
        "from meeple.node.wire import registry\n"
        "registry()"
    )
    assert "meeple.node.rooms" in loaded  # the registry did run
    others = {m for m in COMMAND_MODULES if m != COMMANDS["node"]}
    assert not others & loaded
    assert not {m for m in loaded if m.startswith(("meeple.ai", "meeple.tui"))}
    assert "meeple.server.lobby.bots" not in loaded
