"""Build script for the optional compiled cores (everything else is in pyproject.toml).

The C cores ``meeple.games.scrabble._movegen`` and ``meeple.ai._santorini_core`` are
*optional* extensions: when one cannot be built (no compiler, ``CC=false``, missing
Python headers) the failure is logged and the install goes on; meeple then runs on the
pure-Python generator or search and says so once in its log. Set ``MEEPLE_NO_NATIVE=1``
to skip the build on purpose.
"""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _compile_args() -> list[str]:
    if os.name == "nt":
        return []
    args = ["-O3"]
    # The GADDAG walk ranks arcs with popcount: without the instruction gcc calls a
    # library routine that costs a fifth of the generation time. Every x86-64 CPU of
    # the last fifteen years has it; ask /proc/cpuinfo rather than assume.
    if platform.machine() in ("x86_64", "AMD64"):
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                if " popcnt" in f.read():
                    args.append("-mpopcnt")
        except OSError:
            pass
    return args


NATIVE = Extension(
    "meeple.games.scrabble._movegen",
    sources=["src/meeple/games/scrabble/_movegen.c"],
    extra_compile_args=_compile_args(),
    optional=True,
)
SANTORINI = Extension(
    "meeple.ai._santorini_core",
    sources=["src/meeple/ai/_santorini_core.c"],
    extra_compile_args=_compile_args(),
    optional=True,
)


class OptionalBuildExt(build_ext):
    """build_ext that reports a failed compile instead of failing the install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # any compiler or platform error
            _warn(exc)

    def build_extension(self, ext: Any) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            _warn(exc)


def _warn(exc: BaseException) -> None:
    print(
        f"meeple: a compiled core was not built ({exc}); meeple will use its pure-Python twin",
        file=sys.stderr,
    )


extensions = [] if os.environ.get("MEEPLE_NO_NATIVE") else [NATIVE, SANTORINI]
setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuildExt})
