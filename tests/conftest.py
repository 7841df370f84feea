import sys
from pathlib import Path

import pytest

from ckcore.testing import ck_cache_dir, ck_catalog, ck_plugin_manager, ck_registry  # noqa: F401  (fixtures)

sys.path.insert(0, str(Path(__file__).parent / "plugins"))

SMALL_SET = {
    "format": "ckcore-kernel-set/1",
    "arch": "sm_90",
    "instances": [
        {"family": "gemm_tiled", "key": {"dtype": "bf16", "layout": "rcr", "block_m": 16, "block_n": 32, "block_k": 64,
                                         "group_m": 8, "num_warps": 4, "num_stages": 2, "aligned": True}},
        {"family": "gemm_tiled", "key": {"dtype": "fp16", "layout": "rrr", "block_m": 32, "block_n": 32, "block_k": 32,
                                         "group_m": 8, "num_warps": 4, "num_stages": 2, "aligned": False}},
    ],
}


@pytest.fixture
def small_set(tmp_path):
    """A JSON kernel-set file with two cheap instances."""
    import json

    p = tmp_path / "small_set.json"
    p.write_text(json.dumps(SMALL_SET))
    return p


@pytest.fixture(scope="module")
def h200_gemm_registry(tmp_path_factory):
    """An sm_90 registry with the gemm default set, the H200's peaks and a cache of its own
    (one per test module): the selection-model tests' registry."""
    from ckcore import Registry, Settings

    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")), device_name="NVIDIA H200")
    r.declare("gemm", "default")
    return r
