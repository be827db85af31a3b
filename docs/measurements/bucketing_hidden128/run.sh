#!/bin/bash
# Issue #32 item 4 on the CPU for TrainConfig.bucketing "steps" (bfd9acc) against "length" (the default), GTS hidden
# 128 on MAWPS, published protocol (80 epochs, whole train side, last epoch scored), seeds 0-2, fp32, in one run on
# this 2-core CPU: two one-thread runs at a time. Code: the worktree /work/wt-bk at bfd9acc.
D=/work/compaug-runs/bk-acc
cd /work/wt-bk
job() {  # bucketing seed
  /work/main/.venv/bin/python bench/precision_accuracy.py --seeds $2 --precisions fp32 --bucketing $1 --threads 1 \
    --hidden 128 --embedding 128 --bs1-problems 1 --out-dir $D/$1 --state-dir $D/state-$1 \
    --baseline-dir $D/$([ $1 = steps ] && echo length || echo steps) > $D/$1_seed$2.log 2>&1
  echo "$1 seed $2 exit $? $(date -u +%T)" >> $D/done.txt
}
export -f job; export D
printf "steps 0\nlength 0\nsteps 1\nlength 1\nsteps 2\nlength 2\n" | xargs -P 2 -L 1 bash -c 'job $0 $1'
