#!/bin/bash
# bench/longdoc (306 questions, scoped) with the document rerank shipped: the default path, and
# the plain baselines and propagate given the same selection (--select late), at 512 and 1024.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/structure-rerank
for b in 512 1024; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc \
    --strategy default --budget-tokens $b --json $out/longdoc-b$b.json \
    --per-question $out/longdoc-b$b.jsonl
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc \
    --strategy bm25,vector,hybrid,propagate --select late --budget-tokens $b \
    --json $out/singles-late-b$b.json --per-question $out/singles-late-b$b.jsonl
done
