from ckcore.testing import ck_cache_dir, ck_registry  # noqa: F401  (fixtures)
