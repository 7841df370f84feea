"""Rendering kernel templates: one jinja2 Environment, StrictUndefined, a PrefixLoader with one
PackageLoader per plugin package. A template is a pure function of (key, arch, name); ``derived``
holds the values the family derives from the key (:meth:`KernelFamily.template_values`)."""

from __future__ import annotations

import functools

import jinja2

from .arch import ArchSpec
from .keys import IDENTIFIER, KeyBase, template_fields
from .errors import InvalidKernelKey
from .spec import KernelFamily

__all__ = ["render"]


class _Loader(jinja2.BaseLoader):
    """Loads ``"<package>/<file>"`` from ``<package>/templates/<file>``, creating one
    PackageLoader per package on first use."""

    def __init__(self):
        self._loaders: dict[str, jinja2.PackageLoader] = {}

    def get_source(self, environment, template):
        package, _, name = template.partition("/")
        if package not in self._loaders:
            self._loaders[package] = jinja2.PackageLoader(package, "templates")
        return self._loaders[package].get_source(environment, name)


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=_Loader(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _arch_fields(arch: ArchSpec) -> dict:
    return {
        "arch": arch.arch,
        "cc": arch.cc,
        "sm_count": arch.sm_count,
        "tma": arch.tma,
        "wgmma": arch.wgmma,
    }


def render(family: KernelFamily, key: KeyBase, arch: ArchSpec) -> str:
    """The Python source of ``key``'s kernel on ``arch``: one module defining the kernel, a
    ``@triton.jit`` (or ``@gluon.jit``) function named after the instance, last; a Gluon kernel's
    warp-specialised partitions are module functions too, named with a leading underscore.

    :raises InvalidKernelKey: the key's name or fields are not safe template input.
    """
    name = key.name
    if not IDENTIFIER.match(name):
        raise InvalidKernelKey(repr(key), [f"name={name!r}: expected an identifier"])
    template = f"{family.template_package}/{family.template}"
    return _environment().get_template(template).render(
        key=template_fields(key), derived=template_fields(key, family.template_values(key)), arch=_arch_fields(arch),
        name=name, template=template
    )
