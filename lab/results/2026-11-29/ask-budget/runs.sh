#!/bin/bash
# The candidate context of `kgp ask`: the default path at a 1,280-token budget, on bench/longdoc
# (scoped) and the three multi-hop dev sets; SAGE's figures are the baseline files beside it.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/ask-budget
.venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc \
  --strategy default --budget-tokens 1280 \
  --json $out/longdoc-default-b1280.json --per-question $out/longdoc-default-b1280.jsonl
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy default --budget-tokens 1280 \
    --json $out/dev-$d-default-b1280.json --per-question $out/dev-$d-default-b1280.jsonl
done
