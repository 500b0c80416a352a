#!/bin/bash
# bench/longdoc (306 questions, scoped), hybrid --select sage, no token budget: SAGE with the
# structure scorer at its fitted g (0.5), and as before (rerank.structure off: the fixed sum, g 0.7).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/sage-structure
for mode in auto off; do
  KGP_RERANK__STRUCTURE=$mode .venv/bin/kgp lab eval -q --no-ingest \
    --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy hybrid --select sage \
    --json $out/longdoc-sage-structure-$mode.json --per-question $out/longdoc-sage-structure-$mode.jsonl
done
