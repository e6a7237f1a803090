# envgen's entry points. Each target sets up .venv first (idempotent), so a fresh clone needs
# nothing installed but Python (3.11 or newer) and make.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.envgen-installed

.PHONY: setup demo test golden lint format clean bench docker-engine images

setup: $(STAMP)

# Two distributions, both editable: the runtime (runtime/, what trainers install) and the
# generator (envgen, which depends on the runtime at its own version).
$(STAMP): pyproject.toml runtime/pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "envgen needs Python 3.11 or newer, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ./runtime -e '.[test]'
	@touch $(STAMP)

## demo: generate the clients, serve echo_env as a local process, run a short episode.
demo: setup
	$(BIN)/envgen generate
	$(BIN)/envgen check
	$(BIN)/python -m examples.demo

## test: the whole suite (unit, golden, CLI, type checks, end-to-end against real servers
## and real Docker containers: a Docker engine is started first when none answers).
test: setup docker-engine
	$(BIN)/python -m pytest

## docker-engine: make a Docker engine answer (installs Debian's docker.io and starts dockerd
## when needed, as root). Without one the docker-marked tests are skipped, saying why.
docker-engine:
	@bash scripts/ensure-docker.sh || echo "make: no Docker engine; docker-marked tests will be skipped"

## images: build every example env image with no registry (envgen image).
images: setup docker-engine
	$(BIN)/envgen image

## golden: rewrite the golden files under tests/golden/ from tests/golden/*/schemas.
golden: setup
	$(BIN)/python -m tests.golden.regenerate

## bench: run every benchmark and rewrite benchmarks/RESULTS.md (takes a few minutes).
bench: setup
	$(BIN)/python -m benchmarks.bench_codegen --out benchmarks/results/codegen.json
	$(BIN)/python -m benchmarks.bench_step --out benchmarks/results/step.json
	$(BIN)/python -m benchmarks.bench_verify --out benchmarks/results/verify.json
	$(BIN)/python -m benchmarks.report

lint: setup
	$(BIN)/ruff check generator runtime tests examples
	$(BIN)/ruff format --check generator runtime tests examples
	$(BIN)/mypy generator runtime/envgen_runtime

format: setup
	$(BIN)/ruff check --fix generator runtime tests examples
	$(BIN)/ruff format generator runtime tests examples

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
