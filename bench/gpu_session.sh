#!/usr/bin/env bash
# Everything issue-level that needs a GPU, in one call on a lent GPU machine
# (Python 3.12 with torch, llvmlite and pytest, no xdsl): the GPU tests, the
# numerics suite on the device, and the benchmark beside torch and
# torch.compile. Each step is time-boxed so the whole run ends within about
# 9.5 minutes (the device tool's limit per command is 10); logs and the
# benchmark's JSON (written after each workload) land in $OUT.
#
# Prepare on the development machine, from the repository root (the wheels
# xdsl needs that the GPU image lacks; .whl/ stays out of git):
#
#   mkdir -p .git/info; grep -qsx '/.whl/' .git/info/exclude || echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_17_x86_64 --platform any \
#     -d .whl xdsl==0.74.0 immutabledict ordered-set
#
# then run this with the device tool: command "bash bench/gpu_session.sh",
# carry [".whl"], timeout_s 600. Steps: MLFUSE_GPU_STEPS="tests ops bench"
# (the default) or a subset; "occupancy" measures the products again with
# MLFUSE_CUDA_MIN_BLOCKS=2 (see mlfuse/targets/cuda/ptx.py, min_blocks).
set -u -o pipefail
OUT="${OUT:-/tmp/gpu_session}"
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/site:$PWD"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || { echo "no wheels in .whl/ (see the header)"; exit 2; }
{ nvidia-smi; python3 -c "import llvmlite, numpy, xdsl, torch; print('llvmlite', llvmlite.__version__,
  'numpy', numpy.__version__, 'xdsl', xdsl.__version__, 'torch', torch.__version__)"; } \
  2>&1 | tee "$OUT/machine.txt"
# mlfuse's own driver bindings must find the device, or every GPU test would skip
python3 -c "from mlfuse.targets.cuda.driver import driver; d = driver(); print('mlfuse sees', d.name,
  d.arch, d.multiprocessors, 'multiprocessors')" 2>&1 | tee -a "$OUT/machine.txt" \
  || { echo "mlfuse does not see the GPU: stopping"; exit 3; }
steps="${MLFUSE_GPU_STEPS:-tests ops bench}"
pytest=(python3 -m pytest -q -p no:cacheprovider -o addopts= -rfE)

if [[ " $steps " == *" tests "* ]]; then
  echo "== the GPU tests (real device, emulator, stand-in driver, ptxas if present)"
  timeout 120 "${pytest[@]}" -n 4 tests/unit/test_cuda.py tests/unit/test_cuda_driver.py \
    tests/unit/test_ptxas.py 2>&1 | tee "$OUT/tests.log" | tail -15
fi
if [[ " $steps " == *" ops "* ]]; then
  echo "== the numerics suite on the device"
  MLFUSE_DEVICE=cuda timeout 150 "${pytest[@]}" -n 8 tests/unit/test_ops.py tests/unit/test_nn.py \
    tests/unit/test_nn_attention.py tests/unit/test_autograd.py 2>&1 | tee "$OUT/ops.log" | tail -15
fi
if [[ " $steps " == *" bench "* ]]; then
  echo "== the benchmark: memory-bound workloads and the product first"
  timeout 230 python3 bench/gpu.py W1 W2 W3 W4 W9 W5 --budget 0.3 --json "$OUT/gpu.json" \
    2>&1 | tee "$OUT/bench.log"
  timeout 60 python3 bench/gpu.py W6 W7 W8 --budget 0.3 --json "$OUT/gpu-more.json" \
    2>&1 | tee "$OUT/bench-more.log"
fi
if [[ " $steps " == *" occupancy "* ]]; then
  echo "== the products again, two blocks per multiprocessor (128 registers, a few spills)"
  MLFUSE_CUDA_MIN_BLOCKS=2 timeout 150 python3 bench/gpu.py W5 W6 W7 --budget 0.3 \
    --json "$OUT/gpu-minblocks2.json" 2>&1 | tee "$OUT/bench-minblocks2.log"
fi
