"""Move-generation benchmark: ``python benchmarks/movegen.py`` (``make bench``).

Measures, on the word list of issue 14 (npm ``word-list@4.1.0``: its a–z words of
2–15 letters, upper-cased), for each move generator (compiled and pure Python):

- generation time on three positions (empty board AEINRST and ?SATIRE, and the
  mid-game position below with AENRS??), best of ``--runs`` runs, plays counted
  without building ``Move`` objects (``count``) and, separately, built (``plays``);
- greedy self-play: whole games per second on one core (both players greedy);
- the cached lexicon load (memory-mapped GADDAG; no re-parse).

and prints the rows of the issue's table with the Rust engine's figures beside
them. The word list is fetched once from the npm registry (``npm pack``, or the
registry tarball over HTTPS when npm is missing), checked against its published
sha512, and kept under ``~/.cache/meeple/word-list-4.1.0/`` (``MEEPLE_CACHE_DIR``
moves it); it is never committed. ``--lexicon gcide`` (or a path) measures another.
Timings on a shared machine are noisy: run it when the load is low and repeat.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import platform
import random
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

from meeple.ai.match import play_game
from meeple.ai.scrabble import GreedyPlayer
from meeple.games.scrabble.cgp import parse_cgp
from meeple.games.scrabble.engine import EngineUnavailable, MoveGenerator, get_generator
from meeple.games.scrabble.lexicon import Lexicon, default_cache_dir, load_lexicon

WORD_LIST = "word-list@4.1.0"
TARBALL = "https://registry.npmjs.org/word-list/-/word-list-4.1.0.tgz"
# The registry's dist.integrity for the tarball (`npm view word-list@4.1.0 dist.integrity`).
INTEGRITY = "sha512-" + (
    "4vtKyH8lGfaY8DHLTKQDfDxPixdK6BC/2W38TsPE07Wc8uPrMIbEO3quxBFSa2BfsDyG6pW47UEN/9tfYxN6BA=="
)

EMPTY = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 {rack}/ 0/0 0"
POSITIONS = {
    "empty board, AEINRST": EMPTY.format(rack="AEINRST"),
    "empty board, ?SATIRE": EMPTY.format(rack="?SATIRE"),
    # Eight plays into a game, two blanks on the rack (the mid-game row).
    "mid-game, AENRS??": (
        "15/15/15/15/15/15/8P6/7BATIK2F/8Q2EH1A/8U2SOWN/8E1CAGE1/10ER1A1/10L2N1/9XL4/9IO4"
        " AENRS??/ 144/100 0"
    ),
}
# The measurements of the Rust engine (same machine class, same word list).
RUST = {
    "empty board, AEINRST": "0.26–0.29 ms",
    "empty board, ?SATIRE": "3.6–4.2 ms",
    "mid-game, AENRS??": "6.8–7.7 ms",
    "greedy self-play": "105–115 games/s",
    "lexicon load": "2 ms",
}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _tarball() -> bytes:
    """The word-list package tarball, by ``npm pack`` or straight from the registry."""
    npm = shutil.which("npm")
    if npm:
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run(
                [npm, "pack", WORD_LIST, "--silent", "--pack-destination", tmp],
                capture_output=True,
                check=False,
                timeout=120,
            )
            packed = list(Path(tmp).glob("*.tgz"))
            if done.returncode == 0 and packed:
                return packed[0].read_bytes()
    with urllib.request.urlopen(TARBALL, timeout=60) as response:
        data: bytes = response.read(50_000_000)
    return data


def fetch_word_list(cache: Path) -> Path:
    """The issue's word list as a file of upper-case words, fetched once into ``cache``."""
    target = cache / "word-list-4.1.0" / "words.txt"
    if target.exists():
        return target
    data = _tarball()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != INTEGRITY:
        raise SystemExit(f"{WORD_LIST}: tarball does not match the registry's sha512")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = tar.extractfile("package/words.txt")
        if member is None:
            raise SystemExit(f"{WORD_LIST}: no package/words.txt in the tarball")
        raw = member.read().decode("utf-8")
    words = sorted({w.upper() for w in raw.split() if re.fullmatch(r"[a-z]{2,15}", w)})
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(words) + "\n", encoding="ascii")
    return target


def _best(fn: object, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def _self_play(generator: MoveGenerator, lexicon: Lexicon, games: int, seed: int) -> float:
    """Greedy v greedy whole games per second (move generation, choices, bookkeeping)."""
    player = GreedyPlayer(lexicon, generator)
    start = time.perf_counter()
    for g in range(games):
        play_game((player, player), random.Random(seed + g), think_time=0.0)
    return games / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per position (best is kept)")
    parser.add_argument("--games", type=int, default=200, help="self-play games, native engine")
    parser.add_argument("--python-games", type=int, default=3, help="self-play games, python")
    parser.add_argument(
        "--lexicon", default="word-list", help="word-list (default), gcide, or a word-list path"
    )
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()

    print(f"python {platform.python_version()} ({platform.python_implementation()})")
    print(f"cpu {_cpu_model()}, nproc {os.cpu_count()}, load {os.getloadavg()[0]:.2f}")
    source = fetch_word_list(default_cache_dir()) if args.lexicon == "word-list" else args.lexicon
    start = time.perf_counter()
    lexicon = load_lexicon(source)  # compiles and caches on the first run
    first = time.perf_counter() - start
    load = _best(lambda: load_lexicon(source), 10)
    print(f"lexicon {source}: {len(lexicon)} words, first load {first:.2f} s")

    engines: list[MoveGenerator] = []
    for name in ("native", "python"):
        try:
            engines.append(get_generator(name))
        except EngineUnavailable as exc:
            print(f"engine {name}: not available ({exc})")

    rows: dict[str, list[str]] = {}
    details = []
    for engine in engines:
        python = engine.name == "python"
        runs = max(1, args.runs // 5) if python else args.runs
        for label, cgp in POSITIONS.items():
            position = parse_cgp(cgp)
            board, rack = position.board, position.rack
            count = engine.count(board, rack, lexicon)
            counted = _best(lambda e=engine, b=board, r=rack: e.count(b, r, lexicon), runs)
            built = _best(lambda e=engine, b=board, r=rack: list(e.plays(b, r, lexicon)), runs)
            rows.setdefault(label, []).append(f"{counted * 1e3:.2f} ms")
            details.append(
                f"{engine.name:<6} {label:<22} {count:>6} plays: count {counted * 1e3:8.2f} ms,"
                f" as Move objects {built * 1e3:8.2f} ms"
            )
        games = args.python_games if python else args.games
        rate = _self_play(engine, lexicon, games, args.seed)
        rows.setdefault("greedy self-play", []).append(f"{rate:.1f} games/s")
        details.append(f"{engine.name:<6} greedy self-play: {games} games, {rate:.1f} games/s")
    rows["lexicon load"] = [f"{load * 1e3:.1f} ms"] * len(engines)

    print()
    print("\n".join(details))
    print()
    heads = " | ".join(f"meeple {e.name}" for e in engines)
    print(f"| work | the Rust engine | {heads} |")
    print("|---|---|" + "---|" * len(engines))
    names = {
        "empty board, AEINRST": "empty board, AEINRST",
        "empty board, ?SATIRE": "empty board, ?SATIRE",
        "mid-game, AENRS??": "`benchmarks/movegen.py` mid-game AENRS??",
        "greedy self-play": "greedy self-play, whole games per second, one core",
        "lexicon load": "lexicon load from its compiled file",
    }
    for key, title in names.items():
        print(f"| {title} | {RUST[key]} | " + " | ".join(rows.get(key, [])) + " |")


if __name__ == "__main__":
    main()
