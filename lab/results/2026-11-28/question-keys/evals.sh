#!/bin/bash
# The entity walk's question finder: the corpus's entity keys (n-gram lookup, no spaCy at query
# time) against the NLP extractor run on the question. Default path and `entity`, 512 tokens,
# on the multi-hop dev corpora ingested with late piece vectors and the NLP layer (qa-late-$d).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/question-keys
for d in hotpotqa 2wikimultihopqa musique; do
  for finder in keys spacy; do
    KGP_ENTITY_GRAPH__QUESTION_FINDER=$finder .venv/bin/kgp lab eval -q --no-ingest \
      --dataset ../shared/bench/dev/$d.jsonl --corpus qa-late-$d --strategy default \
      --budget-tokens 512 --json $out/$finder-$d.json --per-question $out/$finder-$d.jsonl
  done
done
