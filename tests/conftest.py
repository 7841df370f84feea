import sys
from pathlib import Path

import pytest

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
def cache_dir(tmp_path, monkeypatch):
    """A private, empty cache root for one test (CKCORE_CACHE_DIR)."""
    d = tmp_path / "ckcache"
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(d))
    return d


@pytest.fixture
def small_set(tmp_path):
    """A JSON kernel-set file with two cheap instances."""
    import json

    p = tmp_path / "small_set.json"
    p.write_text(json.dumps(SMALL_SET))
    return p


@pytest.fixture
def registry(cache_dir):
    from ckcore import Registry, Settings

    return Registry("sm_90", settings=Settings(cache_dir=cache_dir))
