#!/usr/bin/env bash
# Creates .venv (Python >= 3.10) and installs ckcore, ck-plugin-gemm and their dependencies.
# Without an NVIDIA GPU it installs the CPU build of torch (kernels then run in Triton's
# interpreter); with one, the default (CUDA) torch build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -c 'import sys; assert sys.version_info >= (3, 10), "ckcore needs Python >= 3.10"'
[ -d .venv ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  python -m pip install -q "torch>=2.10"
else
  python -m pip install -q "torch==2.13.0" || python -m pip install -q --index-url https://download.pytorch.org/whl/cpu "torch>=2.10"
fi
python -m pip install -q -e ".[test]" -e plugins/gemm -e plugins/stream_k -e plugins/grouped_conv -e plugins/depthwise
# The example third-party plugin, installed from its own folder as a third party would.
python -m pip install -q -e examples/softmax
