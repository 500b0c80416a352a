#!/bin/bash
# What the default path is compared with on the same corpora (qa-late-$d, 512 tokens): the
# baselines and the other strategies given the same late rerank, and the neo4j-graphrag peer as
# it ships. (The other strategies' files were written by a separate run, as others-late-$d.)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/question-keys
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy bm25,vector,hybrid --select late --budget-tokens 512 \
    --json $out/baselines-late-$d.json --per-question $out/baselines-late-$d.jsonl
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy mogg,propagate,mog --select late --budget-tokens 512 \
    --json $out/others-late-$d.json --per-question $out/others-late-$d.jsonl
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy peer-neo4j-graphrag-hybrid --budget-tokens 512 \
    --json $out/peer-$d.json --per-question $out/peer-$d.jsonl
done
