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
