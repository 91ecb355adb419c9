# The two commands a new user needs: `make serve` and `make test`.
# Both bootstrap .venv from nothing but Python 3.11 and make.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: serve test lint typecheck pytest bench fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "meeple needs Python 3.11 or newer"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/meeple serve

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy src

pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/movegen.py
	$(BIN)/python benchmarks/santorini_ai.py
	$(BIN)/python benchmarks/server_load.py

# Coverage-guided fuzzing of every protocol (atheris, the `fuzz` extra): 1,000,000 inputs
# per target by default; FUZZ_ARGS="--runs 20000 twente" for a quick look. Not part of
# `make test`.
fuzz: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,fuzz]'
	$(BIN)/python fuzz/run.py $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis .fuzz
