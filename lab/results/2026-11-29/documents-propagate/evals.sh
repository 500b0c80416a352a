#!/bin/bash
# bench/longdoc, hybrid and propagate given the same selection (--select late: the late rerank
# with the shipped document rerank), scoped to the question's paper and across the whole corpus.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/documents-propagate
for scope in document corpus; do
  for b in 512 1024; do
    .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc \
      --strategy hybrid,propagate --select late --scope $scope --budget-tokens $b \
      --json $out/$scope-b$b.json --per-question $out/$scope-b$b.jsonl
  done
done
