#!/bin/bash
# Issue #32 item 4 on the CPU for the padded wave pass (solvers/gts_wave_graph.py: what steps graphed and
# graphed-whole now capture with the default teacher_pass "waves"), run eagerly as step "dense", against the
# row-wise step (teacher forcing by waves, the default), GTS hidden 128 on MAWPS, published protocol (80 epochs,
# whole train side, last epoch scored), seeds 0-2, fp32, in one run on this 2-core CPU: two one-thread runs at a
# time. Code: the worktree /work/wt-pw at 0e16c9f.
D=/work/compaug-runs/pw-acc
cd /work/wt-pw
job() {  # step seed
  /work/main/.venv/bin/python bench/precision_accuracy.py --seeds $2 --precisions fp32 --step $1 --threads 1 \
    --hidden 128 --embedding 128 --bs1-problems 1 --out-dir $D/$1 --state-dir $D/state-$1 \
    --baseline-dir $D/$([ $1 = dense ] && echo rowwise || echo dense) > $D/$1_seed$2.log 2>&1
  echo "$1 seed $2 exit $? $(date -u +%T)" >> $D/done.txt
}
export -f job; export D
printf "dense 0\nrowwise 0\ndense 1\nrowwise 1\ndense 2\nrowwise 2\n" | xargs -P 2 -L 1 bash -c 'job $0 $1'
