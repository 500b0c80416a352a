# The two commands of the README. Both are idempotent and need only python3, Java 17 and Maven.
#   make demo   set up, start a local Neo4j, apply the schema, ingest the samples, answer a question
#   make test   set up, then run the whole test suite against a real Neo4j it starts and stops
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
KGP := $(VENV)/bin/kgp
# uv installs from its cache outside the clone (~/.cache/uv), so a warm `make test` is fast.
UV ?= $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)
EXTRAS ?= all,dev

.PHONY: install demo test test-fast neo4j-start neo4j-stop clean

$(VENV)/.installed: pyproject.toml
	@command -v java >/dev/null || { echo "Java 17 is missing: apt-get install -y openjdk-17-jre-headless"; exit 1; }
	@command -v mvn >/dev/null || { echo "Maven is missing: apt-get install -y maven"; exit 1; }
	@test -x "$(UV)" || $(PYTHON) -m pip install --user --quiet uv
	"$(UV)" venv --quiet --allow-existing --python $(PYTHON) $(VENV)
	"$(UV)" pip install --quiet --python $(PY) -e ".[$(EXTRAS)]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(KGP) demo

test: install
	$(PY) -m pytest -q

test-fast: install
	$(PY) -m pytest -q -m "not slow"

neo4j-start: install
	$(KGP) neo4j start

neo4j-stop: install
	$(KGP) neo4j stop

clean:
	rm -rf $(VENV) build *.egg-info
