"""A script of benchmarks/ loaded as a module, for tests that use its helpers."""
from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from conftest import REPO


def load(name: str) -> ModuleType:
    """benchmarks/<name>.py as the module ``name`` (its dataclasses look their module up in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
