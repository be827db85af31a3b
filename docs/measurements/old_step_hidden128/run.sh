#!/bin/bash
# Issue #32 item 4, "the new step against the old": GTS hidden 128 on MAWPS, published protocol (80 epochs, whole
# train side, last epoch scored), seeds 0-2, fp32, CPU, with the code before the op-count passes (6b2eb32, the
# commit before 8bf9b60) against the batch-64 lr-1e-3 runs of docs/measurements/batch_lr_hidden128/b64-lr1e-3
# (main at 5e51c5f, after the passes). Same command line as bench/precision_accuracy.py gives each run.
D=/work/compaug-runs/old-step
cd /work/s23-old
run() {
  PYTHONPATH=/work/s23-old /work/main/.venv/bin/python bench/solver_speed.py --epochs 80 --valid-fraction 0 \
    --precision fp32 --seed $1 --threads 1 --bs1-problems 1 --hidden 128 --embedding 128 \
    --data /work/shared/data/mawps/MAWPS.json --out $D/old/fp32_seed$1.json > $D/seed$1.log 2>&1
  echo "seed $1 exit $? $(date -u +%T)" >> $D/done.txt
}
mkdir -p $D/old
(run 0; run 2) &
(run 1) &
wait
