"""Plugin discovery through entry points, allow/block lists, check_pending, registration errors."""

import pytest

import ckcore
from ckcore import DuplicateOperatorError, PluginError, Settings
from ckcore.plugins import Catalog, get_plugin_manager, plugin_distributions


def test_gemm_plugin_discovered_through_entry_points():
    pm = get_plugin_manager(Settings())
    dists = plugin_distributions(pm)
    assert ("gemm", "ck-plugin-gemm", "0.1.0") in dists
    cat = Catalog(pm)
    assert "gemm" in cat.ops
    assert {"gemm_tiled", "gemm_tma"} <= {f.name for f in cat.families_of("gemm")}


def test_allow_list_and_block_list():
    only_gemm = Catalog(get_plugin_manager(Settings(plugins=("gemm",))))
    assert only_gemm.ops.keys() == {"gemm"} and set(only_gemm.families) == {"gemm_tiled", "gemm_tma", "gemm_persistent", "gemm_gluon_ws"}
    assert not Catalog(get_plugin_manager(Settings(plugins=("other",)))).ops
    assert "gemm" not in Catalog(get_plugin_manager(Settings(disabled_plugins=("gemm", "stream_k")))).ops
    with pytest.raises(PluginError, match="no loaded plugin defines"):  # stream_k needs gemm's op
        Catalog(get_plugin_manager(Settings(disabled_plugins=("gemm",))))


def test_settings_from_env():
    s = Settings.from_env({"CKCORE_PLUGINS": "b, a", "CKCORE_DISABLE_PLUGINS": "x", "CKCORE_INTERPRET": "1",
                           "CKCORE_BUILD_WORKERS": "3", "CKCORE_ARCH": "sm_80"})
    assert s.plugins == ("a", "b") and s.disabled_plugins == ("x",) and s.interpret and s.workers == 3
    assert s.arch == "sm_80"


def test_hook_ck_register_operators_duplicate_is_an_error():
    import ckt_broken

    pm = get_plugin_manager(Settings())
    pm.register(ckt_broken.DuplicateGemm(), name="dup")
    try:
        with pytest.raises(DuplicateOperatorError, match="registered twice"):
            Catalog(pm)
    finally:
        pm.unregister(name="dup")


def test_hook_ck_register_kernel_families_from_a_second_plugin():
    import ckt_broken

    pm = get_plugin_manager(Settings())
    pm.register(ckt_broken.Hooks(), name="ckt-broken")
    cat = Catalog(pm)
    assert "gemm_broken" in cat.families and cat.families["gemm_broken"].op == "gemm"


def test_family_for_unknown_op_is_an_error():
    import ckt_broken

    pm = get_plugin_manager(Settings(plugins=("none-at-all",)))
    pm.register(ckt_broken.Hooks(), name="ckt-broken")
    with pytest.raises(PluginError, match="no loaded plugin defines"):
        Catalog(pm)


def test_unknown_hook_fails_check_pending(monkeypatch):
    import ckt_broken
    import pluggy

    real = pluggy.PluginManager.load_setuptools_entrypoints

    def load(self, group, name=None):
        n = real(self, group, name)
        self.register(ckt_broken.UnknownHook(), name="unknown-hook")
        return n

    monkeypatch.setattr(pluggy.PluginManager, "load_setuptools_entrypoints", load)
    with pytest.raises(PluginError, match="unknown-hook"):
        get_plugin_manager(Settings())


def test_registration_of_wrong_type():
    pm = get_plugin_manager(Settings(plugins=("none-at-all",)))

    class Bad:
        @ckcore.hookimpl
        def ck_register_operators(self, register):
            register("not an operator")

    pm.register(Bad(), name="bad")
    with pytest.raises(PluginError, match="Operator instance"):
        Catalog(pm)


def test_drivers_through_stevedore():
    from ckcore.compiler import get_compiler
    from ckcore.heuristics import get_heuristic

    assert get_compiler("triton").name == "triton"
    assert get_heuristic("rules").name == "rules"
    with pytest.raises(PluginError, match="no compiler driver"):
        get_compiler("nvcc-that-is-not-there")
    with pytest.raises(PluginError, match="no heuristic driver"):
        get_heuristic("oracle")


def test_import_touches_no_cuda():
    import subprocess
    import sys

    code = ("import ckcore, torch; from ckcore import Registry; r = Registry('sm_90'); r.declare('gemm'); "
            "print(torch.cuda.is_initialized())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_import_error_names_the_plugin(monkeypatch):
    import importlib.metadata as md

    bad = md.EntryPoint(name="kaput", value="ck_no_such_module_xyz.hooks", group="ckcore")
    real = md.entry_points
    monkeypatch.setattr(md, "entry_points", lambda group=None: [*real(group=group), bad] if group == "ckcore" else real(group=group))
    with pytest.raises(PluginError, match="'kaput'.*failed to import.*CKCORE_DISABLE_PLUGINS=kaput"):
        get_plugin_manager(Settings())
    assert "gemm" in Catalog(get_plugin_manager(Settings(disabled_plugins=("kaput",)))).ops


def test_failing_hook_names_the_plugin():
    pm = get_plugin_manager(Settings())

    class Raises:
        @ckcore.hookimpl
        def ck_register_kernel_families(self, register):
            raise RuntimeError("boom")

    pm.register(Raises(), name="raiser")
    with pytest.raises(PluginError, match="'raiser' failed in ck_register_kernel_families.*boom"):
        Catalog(pm)


def test_testing_kit_samples_valid_keys(ck_catalog):
    from ckcore.arch import load
    from ckcore.testing import sample_valid_keys

    keys = sample_valid_keys(ck_catalog, "gemm_tma", 5, seed=1)
    assert len(keys) == 5 == len(set(keys))
    assert all(not ck_catalog.families["gemm_tma"].check(k, load("sm_90")) for k in keys)
    assert keys == sample_valid_keys(ck_catalog, "gemm_tma", 5, seed=1)
