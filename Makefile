# envgen's entry points. Each target sets up .venv first (idempotent), so a fresh clone needs
# nothing installed but Python (3.11 or newer) and make.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.envgen-installed
PY313_SUMMARY := $(VENV)/py313-summary.txt

.PHONY: setup demo test test-py313 golden lint format clean bench bench-quick docker-engine images

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
## test-py313 runs first; if it failed, its summary line is printed again at the very end and
## the exit status is non-zero, whatever the main suite's result.
test: setup docker-engine
	@py313=0; main=0; \
	$(MAKE) --no-print-directory test-py313 || py313=$$?; \
	$(BIN)/python -m pytest || main=$$?; \
	if [ $$py313 -ne 0 ]; then \
		echo "make: test-py313 failed (exit $$py313); its summary:"; \
		cat $(PY313_SUMMARY) 2>/dev/null || echo "==== 1 failed (test-py313 did not finish) ===="; \
	fi; \
	[ $$main -eq 0 ] && [ $$py313 -eq 0 ]

## test-py313: under Python 3.13 (Debian 13's, in a chroot built with debootstrap and cached
## in /var/cache/envgen; needs root): the runtime tests, an episode of every generated client
## installed from wheels against the example servers, and generate + check giving the same
## bytes. Python 3.12 is checked statically (mypy --python-version 3.12 in tests/test_static.py).
test-py313: setup
	@rm -f $(PY313_SUMMARY)
	$(BIN)/python scripts/py313.py --summary-file $(PY313_SUMMARY)

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

## bench: run every benchmark and rewrite benchmarks/RESULTS.md (about 12 minutes on a quiet
## 2-core machine; the JSON of each records the machine's cores and load during its run).
bench: setup
	$(BIN)/python -m benchmarks.bench_codegen --out benchmarks/results/codegen.json
	$(BIN)/python -m benchmarks.bench_step --out benchmarks/results/step.json
	$(BIN)/python -m benchmarks.bench_pool --out benchmarks/results/pool.json
	$(BIN)/python -m benchmarks.bench_verify --out benchmarks/results/verify.json
	$(BIN)/python -m benchmarks.bench_serve --out benchmarks/results/serve.json
	$(BIN)/python -m benchmarks.report

## bench-quick: every benchmark's quick form, results and report in a scratch folder (a smoke
## test, about 5 minutes; benchmarks/results/ and RESULTS.md are left alone).
bench-quick: setup
	@out=$$(mktemp -d /tmp/envgen-bench-quick.XXXXXX) && set -e && \
	$(BIN)/python -m benchmarks.bench_codegen --quick --out $$out/codegen.json && \
	$(BIN)/python -m benchmarks.bench_step --quick --out $$out/step.json && \
	$(BIN)/python -m benchmarks.bench_pool --quick --out $$out/pool.json && \
	$(BIN)/python -m benchmarks.bench_verify --quick --out $$out/verify.json && \
	$(BIN)/python -m benchmarks.bench_serve --quick --out $$out/serve.json && \
	$(BIN)/python -m benchmarks.report --results $$out --out $$out/RESULTS.md && \
	echo "bench-quick: results and RESULTS.md in $$out"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy generator runtime/envgen_runtime

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
