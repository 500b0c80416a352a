#!/bin/bash
# bench/longdoc (306 questions, scoped), `auto --select sage`, no token budget: the fixed sum at
# its shipped g (0.7), and the document rerank's probability at the g fit.sh chose (0.3).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/sage-equal-context
run() {  # run NAME [ENV=VALUE ...]
  local name=$1
  shift
  env "$@" .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc \
    --corpus doc-longdoc --strategy auto --select sage \
    --json "$out/longdoc-$name.json" --per-question "$out/longdoc-$name.jsonl"
}
run fixed-g0.7 KGP_RERANK__STRUCTURE=off
run structure-g0.3 KGP_SAGE__GRADIENT=0.3
