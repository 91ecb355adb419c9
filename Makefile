# The two commands a new user needs: `make serve` and `make test`.
# Both bootstrap .venv from nothing but Python 3.11 and make.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# The compiled move generator (optional: without a C compiler meeple runs on the
# pure-Python one). The editable install builds it; this rebuilds it when the C
# source changes. MEEPLE_NO_NATIVE=1 skips it.
NATIVE_SRC   := src/meeple/games/scrabble/_movegen.c src/meeple/ai/_santorini_core.c
NATIVE_STAMP := $(VENV)/.native-stamp
# axe-core, the accessibility engine of the browser tests, at its current release: on npm
# only, so fetched from the npm registry once and checked against its pinned integrity
# hash (scripts/fetch_axe.py); kept in .venv, never in the repository.
AXE := $(VENV)/share/axe-core/axe.min.js

.PHONY: serve cluster test test-fast test-deep lint typecheck pytest collect lexicons bench fuzz crash clean native

# Python's bytecode cache stays on for every recipe, whatever the shell says: pytest
# caches its assertion-rewritten test modules beside them, and without that cache every
# xdist worker rewrote all ~330 test modules again (about 35 s of a collection of 40 s).
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml setup.py Makefile
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "meeple needs Python 3.11 or newer"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools>=77"
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(NATIVE_STAMP): $(STAMP) $(NATIVE_SRC) setup.py
	$(BIN)/python setup.py --quiet build_ext --inplace
	touch $(NATIVE_STAMP)

native: $(NATIVE_STAMP)

$(AXE): $(STAMP) scripts/fetch_axe.py
	$(BIN)/python scripts/fetch_axe.py $@

serve: $(STAMP) $(NATIVE_STAMP)
	$(BIN)/meeple serve

# NATS, an embedded PostgreSQL, three rooms+lobby+store nodes and three edges, each edge
# with NATS rights on its own seats only (docs/cluster.md);
# Ctrl-C, or `meeple cluster down` from another shell, stops them.
cluster: $(STAMP) $(NATIVE_STAMP)
	$(BIN)/meeple cluster up --nodes 3

# Lint, type check and the warm-up of the test modules' cache run side by side (mypy
# keeps one core busy); then every test.
test: $(STAMP) $(NATIVE_STAMP) $(AXE)
	$(MAKE) --no-print-directory --output-sync=target -j3 lint typecheck collect
	$(MAKE) --no-print-directory pytest

# The inner loop (about a minute): the pure tests (engines, protocols' sans-I/O cores, AI,
# ratings: no socket, no subprocess, no browser) but those marked slow, with a tenth of
# each hypothesis test's examples (docs/benchmarks.md, "The test suite").
# test_santorini_external plays over pipes with an engine process: make test runs it.
FAST_TESTS := tests/games tests/protocols tests/ai tests/ratings tests/test_layering.py \
	--ignore=tests/ai/test_santorini_external.py
test-fast: $(STAMP) $(NATIVE_STAMP) lexicons
	HYPOTHESIS_PROFILE=fast $(BIN)/pytest -n 2 --dist worksteal -m "not slow" $(FAST_TESTS)

# Every test with ten times the hypothesis examples and its health checks, and the whole
# sets that make test only samples (positions, seeds: tests/depth.py); a nightly style
# run, not in CI (tests/conftest.py). Examples it finds are kept as @example.
test-deep: $(STAMP) $(NATIVE_STAMP) $(AXE) lexicons
	HYPOTHESIS_PROFILE=deep $(BIN)/pytest $(PYTEST_ARGS)

# Collects every test once, in one process: writes the bytecode cache that the xdist
# workers then read instead of each rewriting every test module. Then compiles the word
# lists, while lint and the type check run.
collect: $(STAMP) $(NATIVE_STAMP) lexicons
	$(BIN)/pytest --collect-only -q -p no:xdist > /dev/null

# The word lists the servers and nodes of the tests load, compiled before any test runs
# (a fresh checkout compiles each once, about 10 s of CPU; later loads map the cache
# file, 0.5 s for the three). Every test target asks for it: compiled inside a test, the
# first worker's test paid the compile and another worker's waited on its lock (31 s of
# 0.1 s of CPU in a directory run of a new worktree, issue 33).
lexicons: $(STAMP) $(NATIVE_STAMP)
	$(BIN)/python -c 'from meeple.games.scrabble.lexicon import load_lexicon; [load_lexicon(n) for n in ("wordnik", "gcide", "enable")]'

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy src

# Three workers on two cores: much of the suite waits on sockets, browsers and timers,
# so a third worker fills the cores while the others wait. PYTEST_ARGS="-n 0 tests/server"
# for one process and a part of it.
# worksteal: a worker that runs out takes tests from another's queue, so the long ones
# (browsers, clusters, kills) do not make one worker finish minutes after the others.
PYTEST_ARGS ?= -n 3 --dist worksteal

pytest: $(STAMP) $(NATIVE_STAMP) $(AXE) lexicons
	$(BIN)/pytest $(PYTEST_ARGS)

bench: $(STAMP) $(NATIVE_STAMP)
	$(BIN)/python benchmarks/movegen.py
	$(BIN)/python benchmarks/santorini_ai.py
	$(BIN)/python benchmarks/server_load.py
	$(BIN)/python benchmarks/web_fanout.py
	$(BIN)/python benchmarks/web_preview.py
	$(BIN)/python benchmarks/bot_loop_lag.py
	$(BIN)/python benchmarks/recovery.py
	$(BIN)/python benchmarks/store.py
	$(BIN)/python benchmarks/jetstream_log.py
	$(BIN)/python benchmarks/bus.py
	$(BIN)/python benchmarks/check_kits.py
	$(BIN)/python benchmarks/abuse.py
	$(BIN)/python benchmarks/page_weight.py
	$(BIN)/python benchmarks/lobby_to_game.py
	$(BIN)/python benchmarks/replay_analysis.py
	$(BIN)/python benchmarks/cluster.py
	$(BIN)/python benchmarks/cluster_fanout.py

# Coverage-guided fuzzing of every protocol (atheris, the `fuzz` extra): 1,000,000 inputs
# per target by default; FUZZ_ARGS="--runs 20000 twente" for a quick look. Not part of
# `make test`.
fuzz: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,fuzz]'
	$(BIN)/python fuzz/run.py $(FUZZ_ARGS)

# The crash test (docs/crash.md): `meeple serve` killed with SIGKILL at 50 random moments
# (and stopped with SIGTERM at 5 more) while every protocol plays, then the database is
# checked: on SQLite, then on PostgreSQL — CRASH_PG names an empty database, else the
# embedded one (meeple.server.store.pgembed) when it is installed. A random seed each time,
# printed; CRASH_ARGS="--seed 7 --kills 200" replays or lengthens. Not part of `make test`.
CRASH_PG ?= postgresql
crash: $(STAMP) $(NATIVE_STAMP)
	$(BIN)/python -m tests.crash --database sqlite --kills 50 --stops 5 $(CRASH_ARGS)
	$(BIN)/python -m tests.crash --database $(CRASH_PG) --skip-if-missing --kills 50 --stops 5 $(CRASH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis .fuzz build
	rm -f src/meeple/games/scrabble/_movegen.*.so
