#!/bin/bash
# The demo's workload on the backend in DAVINCI_DEV_DIR: the seed's tour,
# the MLP, then a CNN trained with torch_npu and classifying through
# davinci-atc and acl.mdl (left out where DAVINCI_DEMO_NO_TORCH is set: the
# QEMU guest, where importing torch takes minutes). Called by
# scripts/demo.sh.
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
if [ -z "${DAVINCI_DEMO_NO_TORCH:-}" ]; then
	echo "== model: a small ResNet trained on the NPU with torch_npu, then"
	echo "   exported to ONNX, converted with davinci-atc, run by acl.mdl"
	t0=$(date +%s%N)
	(cd "$samples" && "$py" cnn_digits.py)
	echo "   ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
fi
