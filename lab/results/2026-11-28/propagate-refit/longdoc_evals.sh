#!/bin/bash
# check on bench/longdoc: propagate + late with the train fit (k=30 candidate recall) vs shipped, same sitting
cd /work/main && source .venv/bin/activate
O=/work/data/s24/evals
run() { name=$1; shift
  env "$@" kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy propagate --select late --budget-tokens 1024 --json $O/longdoc-$name.json --per-question $O/longdoc-$name.jsonl > $O/longdoc-$name.log 2>&1
}
run fit1 KGP_PROPAGATION__LAM_C=0.0 KGP_PROPAGATION__LAM_P=0.5 KGP_PROPAGATION__LAM_I=1.0 KGP_PROPAGATION__LAM_T=0.15 KGP_PROPAGATION__LAM_D=0.0 &
run shipped KGP_X=1 &
wait; echo DONE > $O/longdoc.done
