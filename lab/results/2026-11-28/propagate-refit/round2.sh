#!/bin/bash
cd /work/main && source .venv/bin/activate
O=/work/data/s24/evals
FIT="KGP_PROPAGATION__LAM_C=0.0 KGP_PROPAGATION__LAM_P=0.5 KGP_PROPAGATION__LAM_I=1.0 KGP_PROPAGATION__LAM_T=0.15"
kgp lab eval -q --no-ingest --dataset /work/data/ldtrain250 --corpus doc-ldtrain250 --strategy hybrid --select late --budget-tokens 1024 --json $O/train-hybrid.json --per-question $O/train-hybrid.jsonl > $O/train-hybrid.log 2>&1 &
( env $FIT kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy propagate --select late --budget-tokens 512 --json $O/longdoc512-fit1.json --per-question $O/longdoc512-fit1.jsonl > $O/longdoc512-fit1.log 2>&1
  kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy hybrid --select late --budget-tokens 512 --json $O/longdoc512-hybrid.json --per-question $O/longdoc512-hybrid.jsonl > $O/longdoc512-hybrid.log 2>&1 )
wait
( env $FIT kgp lab eval -q --no-ingest --scope corpus --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy propagate --select late --budget-tokens 1024 --json $O/longdocC-fit1.json --per-question $O/longdocC-fit1.jsonl > $O/longdocC-fit1.log 2>&1 ) &
kgp lab eval -q --no-ingest --scope corpus --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy hybrid,propagate --select late --budget-tokens 1024 --json $O/longdocC-base.json --per-question $O/longdocC-base.jsonl > $O/longdocC-base.log 2>&1
wait
echo DONE > $O/round2.done
