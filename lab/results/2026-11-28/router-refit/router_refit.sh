#!/usr/bin/env bash
# Refit the shipped MoG / MoGG routers on the train sample + the multi-hop dev sets, then read
# mog / mogg with the late rerank, shipped routers vs refit, on bench/longdoc (512, 1024) and the dev sets (512).
set -u
cd /work/main
source .venv/bin/activate
L=/work/data/s26/labels
R=/work/data/s26/routers/refit
O=/work/data/s26/evals
for kind in mog mogg; do
  kgp lab router train-default --labels $L/ldtrain250-$kind.jsonl --labels $L/hotpotqa-$kind.jsonl \
    --labels $L/2wikimultihopqa-$kind.jsonl --labels $L/musique-$kind.jsonl --kind $kind --out $R/$kind \
    > /work/data/s26/routers/train-$kind.log 2>&1
done
K="kgp lab eval -q --no-ingest --strategy mog,mogg --select late"
run() {  # name router dataset corpus budget
  KGP_MOG__DEFAULT_ROUTER=$2 $K --dataset $3 --corpus $4 --budget-tokens $5 --json $O/$1.json --per-question $O/$1.jsonl
}
run longdoc-b512-shipped builtin ../shared/bench/longdoc doc-longdoc 512 &
run longdoc-b512-refit $R ../shared/bench/longdoc doc-longdoc 512
wait
run longdoc-b1024-shipped builtin ../shared/bench/longdoc doc-longdoc 1024 &
run longdoc-b1024-refit $R ../shared/bench/longdoc doc-longdoc 1024
wait
for d in hotpotqa 2wikimultihopqa musique; do
  run $d-b512-shipped builtin ../shared/bench/dev/$d.jsonl qa-$d 512 &
  run $d-b512-refit $R ../shared/bench/dev/$d.jsonl qa-$d 512
  wait
done
touch $O/router.done
