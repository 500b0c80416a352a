#!/bin/bash
# propagate + late on the 250-paper train sample: shipped weights vs the k=30 fit (train split only)
cd /work/main && source .venv/bin/activate
O=/work/data/s24/evals; mkdir -p $O
run() { # name, env...
  name=$1; shift
  env "$@" kgp lab eval -q --no-ingest --dataset /work/data/ldtrain250 --corpus doc-ldtrain250 --strategy propagate --select late --budget-tokens 1024 --json $O/train-$name.json --per-question $O/train-$name.jsonl > $O/train-$name.log 2>&1
}
run shipped KGP_X=1 &
run fit1 KGP_PROPAGATION__LAM_C=0.0 KGP_PROPAGATION__LAM_P=0.5 KGP_PROPAGATION__LAM_I=1.0 KGP_PROPAGATION__LAM_T=0.15 KGP_PROPAGATION__LAM_D=0.0 &
wait
echo DONE > $O/train.done
