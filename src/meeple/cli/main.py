"""``meeple``: the one command. Each sub-command lives in its own module and registers itself.

A command module exposes ``register(subparsers)``, which adds its parser and sets
``handler`` to a function taking the parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["COMMAND_MODULES", "build_parser", "main"]

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


def build_parser() -> argparse.ArgumentParser:
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
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from meeple.server.logfmt import configure

    configure(args.log_level, args.log_format)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
