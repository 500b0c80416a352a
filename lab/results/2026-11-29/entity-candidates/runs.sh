#!/bin/bash
# The default path on the three multi-hop dev corpora with entity's rerank reading 16, 24 and
# 30 candidates, twice each in alternation, then mogg once per set. Idle, 2 cores.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/entity-candidates
for run in 1 2; do
  for n in 16 24 30; do
    for d in hotpotqa 2wikimultihopqa musique; do
      KGP_RERANK__WEIGHTS_FILE=$out/weights-entity-n$n.json .venv/bin/kgp lab eval -q \
        --no-ingest --dataset ../shared/bench/dev/$d.jsonl --corpus qa-late-$d \
        --strategy default --budget-tokens 512 \
        --json $out/$d-n$n-run$run.json --per-question $out/$d-n$n-run$run.jsonl
    done
  done
done
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy mogg --select late --budget-tokens 512 \
    --json $out/$d-mogg.json --per-question $out/$d-mogg.jsonl
done
