"""``make fuzz``: run every target in ``fuzz/targets.py`` under atheris (libFuzzer).

::

    .venv/bin/python fuzz/run.py                      # every target, 1,000,000 inputs each
    .venv/bin/python fuzz/run.py --runs 20000 twente  # a quick look at one

Each target runs in its own process (one libFuzzer per process), seeded with the
target's seed corpus (the byte-exact test sessions, see ``targets.seeds``) in
``.fuzz/corpus/<target>/``, where libFuzzer also keeps the new inputs it finds, so a
second run starts where the first stopped. An input that raises anything other than
the protocol's own error type is saved under ``.fuzz/crashes/<target>/`` and counted;
the run goes on. At the end a table gives, per target, the inputs run (libFuzzer's
own count), the time, the rate and the crashes. The exit code is 1 if any target
crashed or failed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Corpora, crashes and logs; MEEPLE_FUZZ_DIR runs several drivers side by side.
WORK = Path(os.environ.get("MEEPLE_FUZZ_DIR", HERE.parent / ".fuzz")).resolve()
DEFAULT_RUNS = 1_000_000
MAX_LEN = 1024
_DONE = re.compile(rb"Done (\d+) runs in (\d+) second")


def _child(name: str, runs: int, max_len: int) -> None:
    """One target in this process: seed the corpus, then hand over to libFuzzer."""
    import atheris

    with atheris.instrument_imports(include=["meeple.protocols", "meeple.games"]):
        sys.path.insert(0, str(HERE))
        import targets

    target = targets.TARGETS[name]
    corpus = WORK / "corpus" / name
    crashes = WORK / "crashes" / name
    corpus.mkdir(parents=True, exist_ok=True)
    crashes.mkdir(parents=True, exist_ok=True)
    for seed in targets.seeds(target):
        path = corpus / f"seed-{hashlib.sha1(seed).hexdigest()}"
        if not path.exists():
            path.write_bytes(seed)

    def one_input(data: bytes) -> None:
        try:
            target.one(data)
        except target.allowed:
            pass
        except Exception:
            # A bug: keep the input and its traceback; let the fuzzer go on.
            digest = hashlib.sha1(data).hexdigest()
            path = crashes / digest
            if not path.exists():
                path.write_bytes(data)
                (crashes / f"{digest}.txt").write_text(traceback.format_exc())

    argv = [
        sys.argv[0],
        str(corpus),
        f"-runs={runs}",
        f"-max_len={max_len}",
        "-timeout=10",
        "-rss_limit_mb=2048",
        "-print_final_stats=1",
    ]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


def _crash_count(name: str) -> int:
    folder = WORK / "crashes" / name
    if not folder.exists():
        return 0
    return sum(1 for p in folder.iterdir() if p.suffix != ".txt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="default: every target in fuzz/targets.py")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="inputs per target")
    parser.add_argument("--max-len", type=int, default=MAX_LEN, help="longest input, bytes")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        # Before anything imports meeple here: atheris instruments modules as they load.
        _child(args.child, args.runs, args.max_len)
        return 0
    sys.path.insert(0, str(HERE))
    import targets

    names = args.targets or list(targets.TARGETS)
    unknown = [n for n in names if n not in targets.TARGETS]
    if unknown:
        parser.error(f"no target {', '.join(unknown)}")
    WORK.mkdir(exist_ok=True)
    rows = []
    failed = False
    for name in names:
        before = _crash_count(name)
        log = WORK / f"{name}.log"
        started = time.monotonic()
        with log.open("wb") as out:
            result = subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--child",
                    name,
                    f"--runs={args.runs}",
                    f"--max-len={args.max_len}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONHASHSEED": "0"},
                check=False,
            )
        elapsed = time.monotonic() - started
        done = _DONE.findall(log.read_bytes())
        inputs = int(done[-1][0]) if done else 0
        crashes = _crash_count(name) - before
        failed |= result.returncode != 0 or crashes > 0 or not done
        status = "ok" if result.returncode == 0 and done else f"exit {result.returncode}"
        rows.append((name, inputs, elapsed, crashes, status))
        print(
            f"{name:12} {inputs:>10,} inputs {elapsed:8.1f} s {inputs / elapsed:9,.0f}/s "
            f"{crashes:>4} new crashes  {status}  (log {log})",
            flush=True,
        )
    print(f"\n{'target':12} {'inputs run':>12} {'crashes':>8}")
    for name, inputs, _, crashes, _ in rows:
        print(f"{name:12} {inputs:>12,} {crashes:>8}")
    if any(c for *_, c, _ in rows):
        print(f"\ncrashing inputs and tracebacks: {WORK / 'crashes'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
