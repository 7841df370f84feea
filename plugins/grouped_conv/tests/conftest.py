import pytest

from ckcore import Registry, Settings
from ckcore.testing import ck_cache_dir, ck_registry  # noqa: F401  (fixtures)

from cases import OPS


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    """A registry (sm_90) with the default sets of the three conv ops (CPU only: nothing built)."""
    r = Registry("sm_90", settings=Settings(cache_dir=tmp_path_factory.mktemp("c")))
    for op in OPS:
        r.declare(op, "default")
    return r
