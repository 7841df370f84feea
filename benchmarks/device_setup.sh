# Source on the device machine (once: scripts it starts see CKCORE_DEVICE_READY and skip it): installs the carried wheels (.whl) and ckcore + plugins, editable.
# .whl holds stevedore 5.10.0 and lightgbm 4.7.0, and for compiled selection trees lleaves 1.3.0 and
# llvmlite 0.44.0 (cp312; `python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 ...`).
set -e
python3 -m pip install -q --no-index --no-deps --no-build-isolation .whl/*.whl 2>&1 | grep -v -i warning || true
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . -e plugins/gemm -e plugins/stream_k -e plugins/grouped_conv -e plugins/depthwise -e examples/softmax 2>&1 | grep -v -i warning || true
export PYTHONUNBUFFERED=1 CKCORE_DEVICE_READY=1
# The device machine has no platformdirs (nothing is installed from an index there), which ckcore
# needs only to find its default cache folder: give every command one (a script may set its own).
export CKCORE_CACHE_DIR=${CKCORE_CACHE_DIR:-/tmp/ckcore-device-cache}
python3 -c "import ckcore, stevedore, torch, triton; print('ckcore ready', torch.__version__, triton.__version__, torch.cuda.get_device_name())"
