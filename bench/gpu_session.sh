#!/bin/bash
# Issue #32's GPU checks in one call, from the repository root of a fresh GPU machine (its image has torch,
# transformers, sympy and scikit-learn, no pytest): run bench/gpu_ship.sh here first and name gpuship in
# the call's `carry`; outputs go to $OUT. At most LIMIT seconds (480: 8 minutes):
#   1. bench/gpu_speed.py on MAWPS alone, on the idle GPU: fp32 and bf16 epochs, aten ops, kernels,
#      GPU-busy share, beam-5 and scoring rates, and the public GTS trained on the same GPU (the ratio);
#   2. tests/solvers/test_cuda.py and test_device_copy.py;
#   3. bench/gpu_speed.py on Math23K (the same figures), with what time is left (about 250 s on the H200; with
#      GRAPHED=1 the graphed-whole step's fp32 epochs alone, no public GTS: Math23K's target is 10 s an epoch).
# ACCURACY=1 adds, in the background from step 2 on, the accuracy check (run on the H200 on 2026-11-26,
# docs/solvers.md): paper-size MAWPS GTS, seeds 0-2, 80 epochs, the published protocol, fp32 and bf16 as six
# processes on the one GPU, then bench/precision_accuracy.py's paired bootstrap interval of bf16 - fp32
# (about 4.5 minutes; step 3 is then left out).
# ACCURACY=1 BATCH=256 LR=4e-3 trains fp32 at that batch and learning rate instead and compares it, seed by seed,
# with the batch-64 fp32 runs of the H200 session (docs/measurements/precision_accuracy_runs_h200_2026-11-26.tar.gz):
# the paper-size check of the larger batch's setting measured at hidden 128 on the CPU (docs/solvers.md).
# OLDSTEP=1 (with ACCURACY=1) trains fp32 with the old step instead (gpuship/old, the code before the op-count passes,
# bench/gpu_ship.sh) and compares it, seed by seed, with the same batch-64 fp32 runs: issue #32's "the new step
# against the old" at paper size (measured at hidden 128 on the CPU, docs/solvers.md).
# DENSE=1 adds, right after step 1 and on the idle GPU, bench/dense_graph.py: the trainer's step against the
# shape-fixed pass eager and captured as a CUDA graph (agreement, ms a step, kernels), and 3 epochs of MAWPS
# training each way (a graph captured per rounded batch shape); at most 4 minutes.
# GRAPHED=1 adds the graphed steps (TrainConfig.step "graphed", solvers/gts_graphs.py: the decoder's pass captured as
# one CUDA graph a padded batch shape and replayed by the trainer; "graphed-whole": the encoder captured with it) to
# step 1: their fp32 epochs, kernels and ratio to the public GTS beside the row-wise step's, 3 epochs each (the first
# holds most captures), in this order: row-wise (teacher forcing by tree waves, the default), graphed-whole with the
# shapes rounded coarsely (TrainConfig.graph_rounding, the default), graphed-whole rounded finely (the rounding of the
# session-36 runs), graphed (coarse), fp32 only: what a cut run loses is the last. Step 3 then trains Math23K with
# graphed-whole coarse, then fine, 2 epochs each (captures and epoch seconds). With DENSE=1 the dense_graph bench
# then trains no epochs of its own (the trainer's graphed epochs are step 1's).
# WHOLE=1 (with GRAPHED=1) adds, after step 2, a whole 80-epoch MAWPS training with graphed-whole (coarse), captures
# included, against the public GTS's epoch (2 epochs trained, the second's seconds) times 80: issue #32's whole
# training time against the public code (about 90 s on the H200, estimated).
# FUSED=1 (with GRAPHED=1) adds the graphed steps with their passes' elementwise chains fused by torch.compile
# (TrainConfig.graph_fusion "inductor", solvers/fusion.py; Triton kernels, compiled in the first capture's warm-up
# runs) when the image has Triton: MAWPS then runs row-wise, graphed-whole, graphed-whole fused, graphed fused,
# graphed-whole fine, graphed (step 1 may take 340 s), Math23K graphed-whole, graphed-whole fused, then fine.
# BUCKETED=1 adds to step 1, beside each of its row-wise, graphed-whole and dense arms, the same step with the batches
# sorted by the decoder's steps (TrainConfig.bucketing "steps": about 40% fewer decoder steps an epoch; step 1 gets
# 70 s more).
# STEP=graphed or STEP=graphed-whole (with ACCURACY=1) trains three fp32 runs with that step and three with the
# row-wise step side by side on the one GPU, and pairs them seed by seed: issue #32's "the new step against the old"
# for this step. FUSION=inductor (with STEP) trains that step's runs with their elementwise chains fused
# (TrainConfig.graph_fusion; the row-wise runs cannot fuse): the fused step's accuracy against the row-wise step's.
# ARMS=<steps> runs step 1 with these gpu_speed.py --steps instead (e.g. rowwise,graphed-whole:waves:coarse:inductor).
# EPOCH_BATCHES=N has every arm of steps 1 and 3 also count the trainer's first N batches of an epoch, each profiled
# after a first pass took it (its shapes captured): kernels a batch as issue #32 first measured them (gpu_speed.py
# --epoch-batches).
# PASS_COMPILE=1 adds, after step 2 (as 2c), bench/pass_compile.py: the decoder's padded wave pass in plain autograd
# compiled whole by torch.compile (Triton), against the hand-written pass unfused and fused, on gpu_speed's steady
# MAWPS batch: kernels and launches a call, the compile's seconds with empty caches and with the caches filled, ms a
# call, the loss and gradients against the hand-written pass (at most 240 s).
# CUDA_TESTS=0 leaves step 2 out (a second call right after one that ran it).
# MAWPS_SPEED=0 leaves step 1 out (a second call right after one that ran it).
# TINY=1 runs the same steps at toy size on the CPU (a check of this script; test_cuda skips there; put the
# virtual environment's python first on PATH); a graphed step, named by ARMS or chosen by GRAPHED, runs as dense
# there (its pass eager, the same rounding, fusion and bucketing): the CPU captures no CUDA graph.
set -u
START=$(date +%s)
LIMIT=${LIMIT:-480}  # seconds the whole script may take (timeout_s of the run call: LIMIT + 30)
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
LOG="$OUT/session.txt"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
if [ ! -d ../shared ]; then
  [ -d gpuship/shared ] || { say "no ../shared and no gpuship/shared: run bench/gpu_ship.sh and carry gpuship"; exit 2; }
  ln -s "$PWD/gpuship/shared" ../shared  # the benches read ../shared/data and ../shared/reference-gts
fi
if ! python -c "import pytest" 2>/dev/null; then
  python -m pip install --quiet --no-index --find-links gpuship/wheels pytest >> "$LOG" 2>&1 || say "pytest not installed"
fi
export PYTHONPATH=$PWD
{ git log -1 --format='commit %h %s' 2>/dev/null; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
  python -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"; nproc; uptime; } >> "$LOG" 2>&1
FUSE_ARMS=0
if [ "${FUSED:-0}" = 1 ]; then
  FUSE_DEVICE=$([ "${TINY:-0}" = 1 ] && echo cpu || echo cuda)
  WHY=$(python -c "import sys, torch; from solvers.fusion import fusion_unavailable; print(fusion_unavailable(torch.device(sys.argv[1])) or '')" "$FUSE_DEVICE" 2>&1)
  if [ -z "$WHY" ]; then FUSE_ARMS=1; else say "FUSED=1 but no fused arms: $WHY"; fi
fi
if [ "${TINY:-0}" = 1 ]; then
  SPEED=(--device cpu --datasets mawps --precisions fp32 --hidden 16 --embedding 8 --skip-timing)
  TINY_STEPS=rowwise,dense,dense:waves:fine,dense:positions  # dense: graphed's pass eager
  [ $FUSE_ARMS = 1 ] && TINY_STEPS=rowwise,dense,dense:waves:coarse:inductor,dense:waves:fine
  [ "${GRAPHED:-0}" = 1 ] && SPEED+=(--steps $TINY_STEPS --teacher-passes waves,positions)
  SPEED23=(--device cpu --datasets math23k --precisions fp32 --hidden 16 --embedding 8 --skip-timing)
  [ "${GRAPHED:-0}" = 1 ] && SPEED23+=(--steps dense,dense:waves:fine)  # the CUDA arms below, their passes eager
  [ "${GRAPHED:-0}" = 1 ] && [ $FUSE_ARMS = 1 ] && SPEED23[-1]=dense,dense:waves:coarse:inductor,dense:waves:fine
  WHOLE_RUN=(--device cpu --datasets mawps --precisions fp32 --hidden 16 --embedding 8 --epochs 2 --steps dense \
    --reference-epochs 1)
  ACC=(--tiny --seeds 0,1,2 --data "$OUT/mawps_small.json")
  python -c "import json,sys; json.dump(json.load(open('../shared/data/mawps/MAWPS.json'))[:60], open(sys.argv[1], 'w'))" "$OUT/mawps_small.json"
else
  SPEED=(--device cuda --datasets mawps --epochs 2 --reference-epochs 1)
  [ "${GRAPHED:-0}" = 1 ] && SPEED=(--device cuda --datasets mawps --epochs 3 --reference-epochs 1 --precisions fp32 \
    --steps rowwise,graphed-whole,graphed-whole:waves:fine,graphed)
  [ "${GRAPHED:-0}" = 1 ] && [ $FUSE_ARMS = 1 ] && SPEED=(--device cuda --datasets mawps --epochs 3 --reference-epochs 1 \
    --precisions fp32 --steps rowwise,graphed-whole,graphed-whole:waves:coarse:inductor,graphed:waves:coarse:inductor,graphed-whole:waves:fine,graphed)
  SPEED23=(--device cuda --datasets math23k --epochs 2 --reference-epochs 1)
  # Math23K's epoch target (10 s) is a time, not a ratio: with GRAPHED=1 the whole-graph step alone, no public GTS
  [ "${GRAPHED:-0}" = 1 ] && SPEED23=(--device cuda --datasets math23k --precisions fp32 --epochs 2 \
    --steps graphed-whole,graphed-whole:waves:fine)
  [ "${GRAPHED:-0}" = 1 ] && [ $FUSE_ARMS = 1 ] && SPEED23=(--device cuda --datasets math23k --precisions fp32 --epochs 2 \
    --steps graphed-whole,graphed-whole:waves:coarse:inductor,graphed-whole:waves:fine)
  WHOLE_RUN=(--device cuda --datasets mawps --precisions fp32 --epochs 80 --steps graphed-whole --reference-epochs 2)
  ACC=(--seeds 0,1,2 --epochs 80 --threads 2 --no-resume --bs1-problems 1)
fi
if [ -n "${ARMS:-}" ]; then  # step 1's steps as given (gpu_speed.py --steps), instead of the switches' choice
  if [ "${TINY:-0}" = 1 ]; then  # the CPU captures no graph: a graphed arm runs its pass eager (dense), options kept
    IFS=, read -ra ARM_LIST <<< "$ARMS"
    ARMS=$(for a in "${ARM_LIST[@]}"; do s=${a%%:*}; [[ $s = graphed* ]] && a=dense${a#"$s"}; printf '%s,' "$a"; done)
    ARMS=${ARMS%,}
  fi
  STEPS_AT=-1
  for i in "${!SPEED[@]}"; do [ "${SPEED[$i]}" = --steps ] && STEPS_AT=$((i + 1)); done
  if [ $STEPS_AT -lt 0 ]; then SPEED+=(--steps "$ARMS"); else SPEED[$STEPS_AT]=$ARMS; fi
fi
if [ -n "${EPOCH_BATCHES:-}" ]; then  # each arm also counts the trainer's first batches once taken (kernels a batch)
  SPEED+=(--epoch-batches "$EPOCH_BATCHES")
  SPEED23+=(--epoch-batches "$EPOCH_BATCHES")
fi
if [ "${BUCKETED:-0}" = 1 ]; then  # each of step 1's rowwise, graphed-whole and dense arms also by the decoder's steps
  STEPS_AT=-1
  for i in "${!SPEED[@]}"; do [ "${SPEED[$i]}" = --steps ] && STEPS_AT=$((i + 1)); done
  if [ $STEPS_AT -lt 0 ]; then SPEED+=(--steps rowwise); STEPS_AT=$((${#SPEED[@]} - 1)); fi
  SPEED[$STEPS_AT]=$(echo ",${SPEED[$STEPS_AT]}," | sed -e 's/,rowwise,/,rowwise,rowwise:waves:coarse:none:steps,/' \
    -e 's/,graphed-whole,/,graphed-whole,graphed-whole:waves:coarse:none:steps,/' \
    -e 's/,dense,/,dense,dense:waves:coarse:none:steps,/' -e 's/^,//' -e 's/,$//')
fi

if [ "${MAWPS_SPEED:-1}" = 1 ]; then
  say "1. gpu_speed ${SPEED[*]}"
  if [ -z "${STEP1_S:-}" ]; then  # (STEP1_S=<seconds> sets step 1's limit itself)
    STEP1_S=$([ $FUSE_ARMS = 1 ] && echo 340 || ([ "${GRAPHED:-0}" = 1 ] && echo 280 || echo 130))
    [ "${BUCKETED:-0}" = 1 ] && STEP1_S=$((STEP1_S + 70))
  fi
  timeout $STEP1_S python bench/gpu_speed.py "${SPEED[@]}" \
    --out "$OUT/gpu_speed.json" > "$OUT/gpu_speed.txt" 2>&1
  say "   gpu_speed exit $?"
else
  say "1. MAWPS speed left out (MAWPS_SPEED=0)"
fi

if [ "${DENSE:-0}" = 1 ]; then  # the shape-fixed pass captured as a CUDA graph (docs/solvers.md), on the idle GPU
  DG=(--device cuda --train-epochs 3 --epochs 0 --out "$OUT/dense_graph.json")  # the shape census is the CPU's
  [ "${TINY:-0}" = 1 ] && DG=(--device cpu --hidden 16 --embedding 8 --steps 1 --epochs 2 --out "$OUT/dense_graph.json")
  [ "${GRAPHED:-0}" = 1 ] && DG+=(--train-epochs 0)  # step 1 trained the graphed step already
  say "1b. dense_graph ${DG[*]}"
  timeout 240 python bench/dense_graph.py "${DG[@]}" > "$OUT/dense_graph.txt" 2>&1
  say "   dense_graph exit $?"
  grep -E "dropout off|a step|capture|shapes|training" "$OUT/dense_graph.txt" | tee -a "$LOG"
fi

if [ "${ACCURACY:-0}" = 1 ]; then
  say "2a. precision_accuracy ${ACC[*]}: six trainings in the background"
  RUNS=$(mktemp -d)
  LEFT=$((LIMIT - ($(date +%s) - START) - 10))  # what the trainings may use: all that is left
  say "   limit ${LEFT} s"
  if [ -n "${STEP:-}" ]; then  # the step against the row-wise one, both trained now, side by side
    STEPX=$([ "${TINY:-0}" = 1 ] && [[ "$STEP" = graphed* ]] && echo dense || echo "$STEP")
    BASE=$(mktemp -d)
    timeout $LEFT python bench/precision_accuracy.py "${ACC[@]}" --precisions fp32 --workers 3 --out-dir "$BASE" \
      --baseline-dir "$RUNS" > "$OUT/accuracy_rowwise.txt" 2>&1 &  # (a baseline dir: one precision needs one)
    BASE_PID=$!
    PRECS=(--precisions fp32 --step "$STEPX" --workers 3 --baseline-dir "$BASE")  # reported again at the end
    [ -n "${FUSION:-}" ] && PRECS+=(--graph-fusion "$FUSION")
  elif [ -n "${BATCH:-}" ] || [ "${OLDSTEP:-0}" = 1 ]; then
    PRECS=(--precisions fp32 --batch-size "${BATCH:-64}" --lr "${LR:-1e-3}")
    [ "${OLDSTEP:-0}" = 1 ] && PRECS+=(--code gpuship/old)
    BASE=$(mktemp -d)
    if [ "${TINY:-0}" = 1 ]; then  # the toy runs at batch 64 as their own baseline
      python bench/precision_accuracy.py "${ACC[@]}" --precisions fp32,bf16 --workers 3 --out-dir "$BASE" >> "$LOG" 2>&1
    else
      tar -xzf docs/measurements/precision_accuracy_runs_h200_2026-11-26.tar.gz -C "$BASE"
    fi
    PRECS+=(--baseline-dir "$BASE" --workers 6)
  else
    PRECS=(--precisions fp32,bf16 --workers 6)
  fi
  # the old step predates TF32 being turned off for fp32 (cuDNN's GRU would use it): NVIDIA_TF32_OVERRIDE=0 turns
  # it off in cuBLAS and cuDNN for every run, as the new code does itself
  NVIDIA_TF32_OVERRIDE=0 timeout $LEFT python bench/precision_accuracy.py "${ACC[@]}" "${PRECS[@]}" \
    --out-dir "$RUNS" > "$OUT/accuracy.txt" 2>&1 &
  ACC_PID=$!
fi

if [ "${CUDA_TESTS:-1}" = 1 ]; then
  say "2. tests/solvers/test_cuda.py"
  timeout 150 python -m pytest -q -p no:cacheprovider tests/solvers/test_cuda.py tests/solvers/test_device_copy.py > "$OUT/cuda_tests.txt" 2>&1
  say "   test_cuda exit $? ($(tail -1 "$OUT/cuda_tests.txt"))"
else
  say "2. CUDA tests left out (CUDA_TESTS=0)"
fi

if [ "${PASS_COMPILE:-0}" = 1 ]; then  # the decoder's pass compiled whole (bench/pass_compile.py)
  PC=(--device cuda --epochs 0)  # the loop structures are the data's: counted on the CPU
  [ "${TINY:-0}" = 1 ] && PC=(--device cpu --hidden 16 --embedding 8 --epochs 1 --backend aot_eager \
    --ways hand-written,compiled)
  say "2c. pass_compile ${PC[*]}"
  timeout 240 python bench/pass_compile.py "${PC[@]}" --out "$OUT/pass_compile.json" > "$OUT/pass_compile.txt" 2>&1
  say "   pass_compile exit $?"
  grep -E "dispatches|kernels|shapes" "$OUT/pass_compile.txt" | tee -a "$LOG"
fi

if [ "${WHOLE:-0}" = 1 ]; then
  say "2b. gpu_speed ${WHOLE_RUN[*]}: a whole training against the public GTS"
  timeout 200 python bench/gpu_speed.py "${WHOLE_RUN[@]}" --out "$OUT/gpu_speed_whole.json" > "$OUT/gpu_speed_whole.txt" 2>&1
  say "   gpu_speed whole training exit $?"
  grep -E "whole training|captures an epoch" "$OUT/gpu_speed_whole.txt" | tee -a "$LOG"
fi

if [ "${ACCURACY:-0}" = 1 ]; then
  wait $ACC_PID
  say "   precision_accuracy exit $?"
  if [ -n "${STEP:-}" ]; then
    wait $BASE_PID
    say "   row-wise runs exit $?"
    tar -czf "$OUT/accuracy_rowwise_runs.tar.gz" -C "$BASE" .
    python bench/precision_accuracy.py "${ACC[@]}" --precisions fp32 --report-only --out-dir "$RUNS" \
      --baseline-dir "$BASE" >> "$OUT/accuracy.txt" 2>&1
  fi
  tar -czf "$OUT/accuracy_runs.tar.gz" -C "$RUNS" .  # one JSON a run: bench/precision_accuracy.py --report-only reads them
  grep -E "bf16 - fp32|this - baseline|mean test answer acc" "$OUT/accuracy.txt" | tee -a "$LOG"
else
  LEFT=$((LIMIT - ($(date +%s) - START) - 5))
  NEED=$([ "${GRAPHED:-0}" = 1 ] && echo 120 || echo 200)
  if [ "$LEFT" -lt "$NEED" ] && [ "${TINY:-0}" != 1 ]; then
    say "3. Math23K speed left out: ${LEFT} s left, it needs about $NEED s or more"
  else
    say "3. gpu_speed ${SPEED23[*]} (limit ${LEFT} s)"
    timeout $LEFT python bench/gpu_speed.py "${SPEED23[@]}" --out "$OUT/gpu_speed_math23k.json" > "$OUT/gpu_speed_math23k.txt" 2>&1
    say "   gpu_speed math23k exit $?"
    grep -E "side by side|kernels|epoch|batches" "$OUT/gpu_speed_math23k.txt" | tee -a "$LOG"
  fi
fi
rm -f "$OUT/mawps_small.json"
[ -f "$OUT/gpu_speed.txt" ] && grep -E "side by side|kernels|epoch|batches" "$OUT/gpu_speed.txt" | tee -a "$LOG"
say "done"
