#!/bin/bash
# Larger batch's learning rate (issue #32): GTS hidden 128 on MAWPS, published protocol (80 epochs, whole train side,
# last epoch scored), seeds 0-2, fp32, CPU; batch 64 at the paper's 1e-3 against batch 256 at 1e-3, 2e-3, 4e-3.
cd /work/main
D=/work/compaug-runs/batch-lr
run() { # name batch lr
  PYTHONPATH=/work/main .venv/bin/python bench/precision_accuracy.py --seeds 0,1,2 --precisions fp32 --hidden 128 \
    --threads 1 --workers 1 --no-resume --bs1-problems 1 --batch-size $2 --lr $3 --out-dir $D/$1 --state-dir $D/state-$1 --baseline-dir $D/b64-lr1e-3 \
    >> $D/$1.log 2>&1
  echo "$1 exit $? $(date -u +%T)" >> $D/done.txt
}
(run b64-lr1e-3 64 1e-3; run b256-lr2e-3 256 2e-3) &
(run b256-lr4e-3 256 4e-3; run b256-lr1e-3 256 1e-3) &
wait
