#!/bin/bash
# Late chunking as the default piece vectors: the multi-hop dev sets ingested again with it (and
# the NLP layer, as the qa-$d corpora were), then the default path and mogg at 512 tokens on both;
# the qa-$d corpora hold the same paragraphs with separate piece vectors.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/late-default
for d in hotpotqa 2wikimultihopqa musique; do
  KGP_INGEST__PIECE_VECTORS=late KGP_DISTILL__NLP_ON_INGEST=true .venv/bin/kgp lab eval -q \
    --dataset ../shared/bench/dev/$d.jsonl --corpus qa-late-$d --strategy default,mogg \
    --budget-tokens 512 --json $out/late-$d.json --per-question $out/late-$d.jsonl
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d \
    --strategy default,mogg --budget-tokens 512 --json $out/separate-$d.json \
    --per-question $out/separate-$d.jsonl
done
