#!/bin/bash
# The default path on bench/longdoc (306 questions, scoped) at 512 and 1024 tokens: fp32 states
# (what ships) and MIXED (candidates int8, question fp32; run with the experiment's switch,
# KGP_EXPERIMENT_MIXED=1, in a checkout carrying it: see README).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/doc-int8-mixed
for b in ${BUDGETS:-512 1024}; do
  for v in ${VARIANTS:-fp32 mixed}; do
    if [ "$v" = mixed ]; then q=int8; m=1; else q=none; m=0; fi
    KGP_RERANK__QUANTIZE=$q KGP_EXPERIMENT_MIXED=$m .venv/bin/kgp lab eval -q --no-ingest \
      --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy default \
      --budget-tokens "$b" --json $out/default-$v-b$b.json --per-question $out/default-$v-b$b.jsonl
  done
done
