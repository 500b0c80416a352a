#!/bin/bash
# The baseline: SAGE's cut as `kgp ask` takes it (auto --select sage, no budget), multi-hop dev sets.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/ask-budget
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy auto --select sage \
    --json $out/dev-$d-sage.json --per-question $out/dev-$d-sage.jsonl
done
