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
        for ep in importlib.metadata.entry_points(group=GROUP):
            if pm.is_blocked(ep.name):
                continue
            try:  # import each plugin first, so a failure names the plugin
                ep.load()
            except Exception as exc:
                dist = getattr(ep.dist, "name", "?")
                raise PluginError(
                    f"ckcore plugin {ep.name!r} (distribution {dist}) failed to import: {exc!r}; "
                    f"fix or uninstall it, or block it with CKCORE_DISABLE_PLUGINS={ep.name}"
                ) from exc
        pm.load_setuptools_entrypoints(GROUP)
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
    """The ops and kernel families registered by a plugin manager's plugins.

    :ivar owner: ``{("op" | "kernel family", name): plugin name}``.
    """

    def __init__(self, pm: pluggy.PluginManager):
        self.pm = pm
        self.ops: dict[str, Operator] = {}
        self.families: dict[str, KernelFamily] = {}
        self.owner: dict[tuple[str, str], str] = {}
        self._collect()

    def _register(self, plugin: str, kind: str, table: dict, obj, base: type) -> None:
        if not isinstance(obj, base):
            raise PluginError(f"plugin {plugin!r}: {kind} registration expects a {base.__name__} instance, got {obj!r}")
        if obj.name in table:
            raise DuplicateOperatorError(kind, obj.name, self.owner[(kind, obj.name)], plugin)
        table[obj.name] = obj
        self.owner[(kind, obj.name)] = plugin

    def _call_each(self, hook: str, kind: str, table: dict, base: type) -> None:
        # One call per plugin, so every registration (and every failure) is attributed to it.
        for impl in reversed(getattr(self.pm.hook, hook).get_hookimpls()):
            plugin = impl.plugin_name
            register = lambda obj, plugin=plugin: self._register(plugin, kind, table, obj, base)  # noqa: E731
            kwargs = {"register": register}
            try:
                impl.function(**{a: kwargs[a] for a in impl.argnames})
            except PluginError:
                raise
            except Exception as exc:
                raise PluginError(f"plugin {plugin!r} failed in {hook}: {exc!r}; block it with "
                                  f"CKCORE_DISABLE_PLUGINS={plugin}") from exc

    def _collect(self) -> None:
        self._call_each("ck_register_operators", "op", self.ops, Operator)
        self._call_each("ck_register_kernel_families", "kernel family", self.families, KernelFamily)
        for fam in self.families.values():
            if fam.op not in self.ops:
                raise PluginError(
                    f"kernel family {fam.name!r} serves op {fam.op!r}, which no loaded plugin defines"
                )

    def contributions(self, plugin: str) -> dict[str, list[str]]:
        """``{"ops": [...], "families": [...]}`` registered by ``plugin``."""
        return {
            "ops": sorted(n for (k, n), p in self.owner.items() if p == plugin and k == "op"),
            "families": sorted(n for (k, n), p in self.owner.items() if p == plugin and k == "kernel family"),
        }

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
