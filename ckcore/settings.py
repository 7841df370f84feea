"""Every ``CKCORE_*`` environment variable, declared once.

Nothing else in ckcore reads ``os.environ``. Build a :class:`Settings` with
:meth:`Settings.from_env` and pass it down; ``docs/settings.md`` lists the same fields.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

__all__ = ["Settings", "ENV_VARS"]


def _split(value: str | None) -> tuple[str, ...] | None:
    if value is None or not value.strip():
        return None
    return tuple(sorted({v.strip() for v in value.split(",") if v.strip()}))


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _on(value: str | None) -> bool:
    """A setting that is on unless set to 0, false, no or off."""
    return (value or "1").strip().lower() not in {"0", "false", "no", "off"}


@attrs.frozen(kw_only=True)
class Settings:
    """ckcore configuration.

    :ivar cache_dir: ``CKCORE_CACHE_DIR``: cache root; default is the per-user cache directory
        (``platformdirs.user_cache_dir("ckcore")``).
    :ivar plugins: ``CKCORE_PLUGINS``: comma-separated allow-list of plugin (entry-point) names;
        unset means all installed plugins.
    :ivar disabled_plugins: ``CKCORE_DISABLE_PLUGINS``: comma-separated block-list.
    :ivar heuristic: ``CKCORE_HEURISTIC``: selection driver (``rules``, ``lightgbm`` or
        ``autotune``; default ``lightgbm``, which falls back to ``rules`` without a model).
    :ivar compiler: ``CKCORE_COMPILER``: compiler driver (default ``triton``).
    :ivar arch: ``CKCORE_ARCH``: target arch (``sm_90``...) overriding detection.
    :ivar kernel_set: ``CKCORE_KERNEL_SET``: kernel set that dispatch declares (default ``default``).
    :ivar interpret: ``CKCORE_INTERPRET``: run kernels in Triton's interpreter even with a GPU.
    :ivar workers: ``CKCORE_BUILD_WORKERS``: default parallel compile workers (default: CPU count).
    :ivar deterministic: ``CKCORE_DETERMINISTIC``: select only run-to-run bitwise reproducible
        kernels (default on; ``0`` also allows atomic, order-dependent ones).
    :ivar autotune_top_k: ``CKCORE_AUTOTUNE_TOP_K``: candidates the ``autotune`` heuristic
        measures per problem (default 5).
    :ivar compiled_trees: ``CKCORE_COMPILED_TREES``: compile the ``lightgbm`` selection models to
        native code when building kernels and predict with it (default on; needs lleaves:
        ``ckcore.heuristics.compiled``). ``0`` keeps LightGBM's own prediction.
    :ivar staging: ``CKCORE_STAGING``: let selection run a problem on padded copies of its
        tensors where its op offers such a twin and it is predicted faster (default on;
        :mod:`ckcore.staging`). ``0`` runs every problem on the caller's tensors.
    """

    cache_dir: Path | None = None
    plugins: tuple[str, ...] | None = None
    disabled_plugins: tuple[str, ...] = ()
    heuristic: str = "lightgbm"
    compiler: str = "triton"
    arch: str | None = None
    kernel_set: str = "default"
    interpret: bool = False
    workers: int | None = None
    deterministic: bool = True
    autotune_top_k: int = 5
    compiled_trees: bool = True
    staging: bool = True

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        """Read the ``CKCORE_*`` variables of ``env`` (default ``os.environ``)."""
        env = os.environ if env is None else env
        workers = env.get("CKCORE_BUILD_WORKERS")
        cache = env.get("CKCORE_CACHE_DIR")
        return cls(
            cache_dir=Path(cache).expanduser() if cache else None,
            plugins=_split(env.get("CKCORE_PLUGINS")),
            disabled_plugins=_split(env.get("CKCORE_DISABLE_PLUGINS")) or (),
            heuristic=env.get("CKCORE_HEURISTIC") or "lightgbm",
            compiler=env.get("CKCORE_COMPILER") or "triton",
            arch=env.get("CKCORE_ARCH") or None,
            kernel_set=env.get("CKCORE_KERNEL_SET") or "default",
            interpret=_truthy(env.get("CKCORE_INTERPRET")),
            workers=int(workers) if workers else None,
            deterministic=_on(env.get("CKCORE_DETERMINISTIC")),
            autotune_top_k=int(env.get("CKCORE_AUTOTUNE_TOP_K") or 5),
            compiled_trees=_on(env.get("CKCORE_COMPILED_TREES")),
            staging=_on(env.get("CKCORE_STAGING")),
        )

    def resolved_cache_dir(self) -> Path:
        """The cache root: ``cache_dir`` or the platform's per-user cache directory."""
        if self.cache_dir is not None:
            return self.cache_dir
        import platformdirs

        return Path(platformdirs.user_cache_dir("ckcore"))


#: environment variable -> Settings field, for docs and tests.
ENV_VARS = {
    "CKCORE_CACHE_DIR": "cache_dir",
    "CKCORE_PLUGINS": "plugins",
    "CKCORE_DISABLE_PLUGINS": "disabled_plugins",
    "CKCORE_HEURISTIC": "heuristic",
    "CKCORE_COMPILER": "compiler",
    "CKCORE_ARCH": "arch",
    "CKCORE_KERNEL_SET": "kernel_set",
    "CKCORE_INTERPRET": "interpret",
    "CKCORE_BUILD_WORKERS": "workers",
    "CKCORE_DETERMINISTIC": "deterministic",
    "CKCORE_AUTOTUNE_TOP_K": "autotune_top_k",
    "CKCORE_COMPILED_TREES": "compiled_trees",
    "CKCORE_STAGING": "staging",
}
