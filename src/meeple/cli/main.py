"""``meeple``: the one command. Each sub-command lives in its own module and registers itself.

A command module exposes ``register(subparsers)``, which adds its parser and sets
``handler`` to a function taking the parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["COMMANDS", "COMMAND_MODULES", "build_parser", "main"]

# Name -> implementation registry (uvicorn style): add a module here to add a command.
COMMAND_MODULES: tuple[str, ...] = (
    "meeple.cli.serve",
    "meeple.cli.scrabble",
    "meeple.cli.santorini",
    "meeple.cli.bot",
    "meeple.cli.play",
    "meeple.cli.cmpn402",
    "meeple.cli.ratings",
    "meeple.cli.check",
    "meeple.cli.node",
)
# The commands each module adds, so that a command imports its own module alone: every
# module's imports together (the AI matches, the TUI, the ratings' store, ...) are a
# tenth of a second of CPU at each start of ``meeple node`` (issue 33).
COMMANDS: dict[str, str] = {
    "serve": "meeple.cli.serve",
    "scrabble": "meeple.cli.scrabble",
    "santorini": "meeple.cli.santorini",
    "bot": "meeple.cli.bot",
    "play": "meeple.cli.play",
    "cmpn402": "meeple.cli.cmpn402",
    "ratings": "meeple.cli.ratings",
    "check": "meeple.cli.check",
    "node": "meeple.cli.node",
    "cluster": "meeple.cli.node",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command``'s module alone (the commands that
    module adds) when it is one of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="meeple",
        description="Scrabble, Santorini and Spectrangle over the wire: server, clients, bots.",
    )
    parser.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    parser.add_argument(
        "--log-format",
        default="text",
        choices=("text", "json"),
        help="text (default) or json: one object per line (docs/operations.md)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # The command is the first word that names one (the options before it take no such
    # value); without one, every command's parser, for the help and the error.
    parser = build_parser(next((a for a in argv if a in COMMANDS), None))
    args = parser.parse_args(argv)
    from meeple.server.logfmt import configure

    configure(args.log_level, args.log_format)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
