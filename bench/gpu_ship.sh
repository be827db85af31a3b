#!/bin/bash
# Prepares gpuship/ for bench/gpu_session.sh, here, from the repository root (the checkout the device tool
# sends): the data and the public GTS that the code reads from ../shared, which does not travel, and
# pytest's wheels, which the GPU image lacks, and the old step's code (gpuship/old). gpuship/ is ignored through .git/info/exclude, so the
# `run` call must name it in `carry` (docs/solvers.md, "GPU session"). About 8 MB.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
SHARED=${SHARED:-../shared}
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/gpuship/' "$exclude" 2>/dev/null || echo '/gpuship/' >> "$exclude"
rm -rf gpuship
mkdir -p gpuship/shared/data gpuship/wheels
cp -r "$SHARED/data/mawps" "$SHARED/data/math23k" gpuship/shared/data/
cp "$SHARED/data/README.md" gpuship/shared/data/ 2>/dev/null || true
cp -r "$SHARED/reference-gts" gpuship/shared/
# pure-Python wheels for the image's Python 3.12 (pytest and what it needs)
PYTHON=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
"$PYTHON" -m pip download --quiet --only-binary=:all: --python-version 3.12 --dest gpuship/wheels pytest
# the old step (the commit before the first op-count pass) for OLDSTEP=1 bash bench/gpu_session.sh
OLD_STEP=${OLD_STEP:-6b2eb32}
mkdir -p gpuship/old
git archive "$OLD_STEP" solvers mwp bench flows | tar -x -C gpuship/old
du -sh gpuship
ls gpuship/wheels
