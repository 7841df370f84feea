import pytest


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private, empty cache root for one test (CKCORE_CACHE_DIR)."""
    d = tmp_path / "ckcache"
    monkeypatch.setenv("CKCORE_CACHE_DIR", str(d))
    return d
