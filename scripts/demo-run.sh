#!/bin/bash
# The demo's workload on the backend in DAVINCI_DEV_DIR: the seed's tour,
# then the MLP. Called by scripts/demo.sh.
#
# usage: DAVINCI_DEV_DIR=DIR scripts/demo-run.sh PYTHON
set -euo pipefail

py=$1
bin=$(dirname "$py")
samples=$(cd "$(dirname "$0")/../samples" && pwd)
# The samples' matrices are small: one BLAS thread is fastest and keeps the
# host timings steady on a busy machine.
export OPENBLAS_NUM_THREADS=1

echo "== nodes in $DAVINCI_DEV_DIR"
ls -l "$DAVINCI_DEV_DIR" | grep davinci | sed 's/^/   /'
echo "== davinci info"
"$bin/davinci" info | sed 's/^/   /'
"$py" "$samples/seed_tour.py"
echo "== model: two-layer MLP, trained on the host, inference on the NPU"
t0=$(date +%s%N)
"$py" "$samples/mlp_digits.py"
echo "   ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
