#!/bin/bash
# The default path after the int8 copy reads each text's word-piece states in a call of its
# own: the three multi-hop dev corpora (qa-late-*, paragraph recall) and bench/longdoc (306
# questions, scoped, evidence recall), 512 and 1024 tokens for papers.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/int8-alone
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy default --budget-tokens 512 \
    --json $out/multihop-$d.json --per-question $out/multihop-$d.jsonl
done
for b in 512 1024; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc \
    --strategy default --budget-tokens $b --json $out/longdoc-b$b.json \
    --per-question $out/longdoc-b$b.jsonl
done
