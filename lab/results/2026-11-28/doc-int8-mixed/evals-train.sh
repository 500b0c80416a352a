#!/bin/bash
# A second check, not part of the rule: the default path at 512 tokens on the 250-paper train
# sample (617 questions, scoped; the papers the shipped head was partly trained on), fp32 and
# MIXED (KGP_EXPERIMENT_MIXED=1, in a checkout carrying the experiment's switch).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/doc-int8-mixed
for v in ${VARIANTS:-fp32 mixed}; do
  if [ "$v" = mixed ]; then q=int8; m=1; else q=none; m=0; fi
  KGP_RERANK__QUANTIZE=$q KGP_EXPERIMENT_MIXED=$m .venv/bin/kgp lab eval -q --no-ingest \
    --dataset "${TRAIN_DATASET:-/work/data/s26/ldtrain250}" --corpus doc-ldtrain250 \
    --strategy default --budget-tokens 512 \
    --json $out/train250-$v-b512.json --per-question $out/train250-$v-b512.jsonl
done
