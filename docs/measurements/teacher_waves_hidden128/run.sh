#!/bin/bash
# GTS teacher forcing by waves against by positions (the pass before), GTS hidden 128 on MAWPS, published protocol
# (80 epochs, whole train side, last epoch scored), seeds 0-2, fp32, one run on this 2-core CPU: two one-thread
# runs at a time. Code: the worktree /work/wt-waves at 67f7651.
D=/work/compaug-runs/waves-acc
cd /work/wt-waves
job() {  # pass seed
  /work/main/.venv/bin/python bench/precision_accuracy.py --seeds $2 --precisions fp32 --teacher-pass $1 --threads 1 \
    --hidden 128 --embedding 128 --bs1-problems 1 --out-dir $D/$1 --state-dir $D/state-$1 \
    --baseline-dir $D/$([ $1 = waves ] && echo positions || echo waves) > $D/$1_seed$2.log 2>&1
  echo "$1 seed $2 exit $? $(date -u +%T)" >> $D/done.txt
}
export -f job; export D
printf "waves 0\npositions 0\nwaves 1\npositions 1\nwaves 2\npositions 2\n" | xargs -P 2 -L 1 bash -c 'job $0 $1'
