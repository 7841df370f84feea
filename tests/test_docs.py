"""Docs stay in step with the code: every hook documented and tested, every setting documented."""

import re
from pathlib import Path

from ckcore import hookspecs
from ckcore.settings import ENV_VARS

ROOT = Path(__file__).resolve().parent.parent
HOOKS = [n for n in dir(hookspecs) if n.startswith("ck_")]


def test_every_hook_documented_with_signature():
    import inspect

    text = (ROOT / "docs/plugins/hooks.md").read_text()
    for name in HOOKS:
        args = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
        assert f"## {name}({args})" in text, name


def test_every_hook_has_a_test():
    tests = "".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py"))
    for name in HOOKS:
        assert re.search(rf"def test_hook_{name}", tests), name


def test_every_setting_documented():
    text = (ROOT / "docs/settings.md").read_text()
    for var in ENV_VARS:
        assert f"`{var}`" in text, var
