# The ckcore testing kit: fixtures ck_cache_dir, ck_plugin_manager, ck_catalog, ck_registry.
pytest_plugins = ["ckcore.testing"]
