#!/bin/bash
# auto over passages with entities, per question: `entity` when the question names an entity of
# the corpus (a seed reached from a named mention), else `mogg`. Default path, 512 tokens.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/question-keys
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy default --budget-tokens 512 \
    --json $out/auto-rule-$d.json --per-question $out/auto-rule-$d.jsonl
done
