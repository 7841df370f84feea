from ckcore.testing import ck_cache_dir, ck_catalog, ck_plugin_manager, ck_registry  # noqa: F401  (fixtures)
