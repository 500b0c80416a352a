#!/bin/bash
# How many candidates the late rerank reads over long documents: the default path (auto ->
# hybrid + late, query head, fp32 states) on bench/longdoc, scoped, with 30 (shipped) and 20.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/doc-candidates
for b in ${BUDGETS:-512}; do
  for n in ${COUNTS:-30 20}; do
    KGP_RERANK__N_CANDIDATES=$n .venv/bin/kgp lab eval -q --no-ingest \
      --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy default \
      --budget-tokens $b --json $out/default-n$n-b$b.json --per-question $out/default-n$n-b$b.jsonl
  done
done
