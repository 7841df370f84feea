#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the test suite. GPU tests (marker `gpu`) are deselected
# by default; run them on a GPU machine with: .venv/bin/python -m pytest -m gpu plugins/gemm/tests
# The tests run in CKCORE_TEST_WORKERS processes (pytest-xdist; default: one per CPU), a test
# file's tests in one process (its module fixtures built once).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m pytest -q -n "${CKCORE_TEST_WORKERS:-auto}" --dist loadfile "$@"
# The example third-party plugin's own tests, from its own folder (its conftest enables ckcore.testing).
(cd examples/softmax && ../../.venv/bin/python -m pytest -q)
