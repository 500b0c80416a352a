#!/bin/bash
# The late rerank over long documents reading int8 word-piece states instead of fp32: the
# default path (auto -> hybrid + late, query head) on bench/longdoc, scoped, all 306 questions.
# QUANTS: none / int8; HEADS: auto (the head in kg_platform/models/rerank) / off; TAG names
# the head in the file names: fp32head (trained on fp32 states) or int8head (retrained here).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/doc-int8
for b in ${BUDGETS:-512 1024}; do
  for q in ${QUANTS:-int8}; do
    for h in ${HEADS:-auto}; do
      KGP_RERANK__QUANTIZE=$q KGP_RERANK__QUERY_HEAD=$h .venv/bin/kgp lab eval -q --no-ingest \
        --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy default \
        --budget-tokens $b --json $out/default-$q-${TAG:-fp32head}-$h-b$b.json \
        --per-question $out/default-$q-${TAG:-fp32head}-$h-b$b.jsonl
    done
  done
done
