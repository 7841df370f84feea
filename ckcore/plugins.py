"""Plugin loading (pluggy) and the catalog of ops and kernel families the plugins register."""

from __future__ import annotations

import importlib.metadata

import pluggy

from . import hookspecs
from .errors import DuplicateOperatorError, PluginError, UnknownOperatorError
from .settings import Settings
from .spec import KernelFamily, Operator

__all__ = ["get_plugin_manager", "Catalog", "plugin_distributions"]

GROUP = hookspecs.PROJECT


def get_plugin_manager(settings: Settings | None = None, *, load_entry_points: bool = True) -> pluggy.PluginManager:
    """A plugin manager with ckcore's hook specs and the installed plugins of the ``ckcore``
    entry-point group, honouring ``CKCORE_PLUGINS`` (allow-list) and ``CKCORE_DISABLE_PLUGINS``
    (block-list), then ``check_pending()``.

    :raises PluginError: a plugin fails to import or implements a hook that is not specified.
    """
    settings = settings or Settings.from_env()
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    if load_entry_points:
        for ep in importlib.metadata.entry_points(group=GROUP):
            if settings.plugins is not None and ep.name not in settings.plugins:
                pm.set_blocked(ep.name)
            if ep.name in settings.disabled_plugins:
                pm.set_blocked(ep.name)
        try:
            pm.load_setuptools_entrypoints(GROUP)
        except Exception as exc:  # an import error inside a plugin
            raise PluginError(f"loading a ckcore plugin failed: {exc!r}; block it with CKCORE_DISABLE_PLUGINS") from exc
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {pm.get_name(exc.plugin)!r} is invalid: {exc}") from exc
    return pm


def plugin_distributions(pm: pluggy.PluginManager) -> list[tuple[str, str, str]]:
    """``(entry-point name, distribution, version)`` of every loaded entry-point plugin."""
    out = []
    for plugin, dist in pm.list_plugin_distinfo():
        out.append((pm.get_name(plugin), dist.metadata["name"], dist.version))
    return sorted(out)


class Catalog:
    """The ops and kernel families registered by a plugin manager's plugins."""

    def __init__(self, pm: pluggy.PluginManager):
        self.pm = pm
        self.ops: dict[str, Operator] = {}
        self.families: dict[str, KernelFamily] = {}
        self._owner: dict[tuple[str, str], str] = {}
        self._collect()

    def _register(self, kind: str, table: dict, obj, base: type) -> None:
        if not isinstance(obj, base):
            raise PluginError(f"{kind} registration expects a {base.__name__} instance, got {obj!r}")
        owner = type(obj).__module__
        if obj.name in table:
            raise DuplicateOperatorError(kind, obj.name, self._owner[(kind, obj.name)], owner)
        table[obj.name] = obj
        self._owner[(kind, obj.name)] = owner

    def _collect(self) -> None:
        self.pm.hook.ck_register_operators(register=lambda op: self._register("op", self.ops, op, Operator))
        self.pm.hook.ck_register_kernel_families(
            register=lambda fam: self._register("kernel family", self.families, fam, KernelFamily)
        )
        for fam in self.families.values():
            if fam.op not in self.ops:
                raise PluginError(
                    f"kernel family {fam.name!r} serves op {fam.op!r}, which no loaded plugin defines"
                )

    def op(self, name: str) -> Operator:
        """The op named ``name``. :raises UnknownOperatorError:"""
        try:
            return self.ops[name]
        except KeyError:
            raise UnknownOperatorError(name, list(self.ops)) from None

    def families_of(self, op: str) -> list[KernelFamily]:
        """Kernel families serving ``op``, by name."""
        self.op(op)
        return sorted((f for f in self.families.values() if f.op == op), key=lambda f: f.name)
