"""`prelabel_eval`: the node's Python API under a name a `handler.py` in the working folder cannot
shadow (this folder is installed as the `prelabel_eval` package: pyproject.toml).

The platform fixes the node's package name, `handler/`, and Python puts the working folder first on
its path: there, `import handler` finds a user's own `handler.py`. This package loads the installed
`handler` package from beside itself, by its file location, and hands out its public names; the
node's code then imports its own modules through it, whatever the working folder holds.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

_HERE = Path(__file__).resolve().parent
# Installed, `prelabel_eval/` is beside `handler/`; in the checkout this folder is `handler/alias/`.
_PACKAGE = _HERE.parent / "handler" if (_HERE.parent / "handler" / "__main__.py").exists() else _HERE.parent


def _handler() -> ModuleType:
    """The `handler` package beside this one (loaded by its location when another is in the way)."""
    loaded = sys.modules.get("handler")
    if loaded is not None and _is_the_node(loaded):
        return loaded
    spec = importlib.util.spec_from_file_location(
        "handler", _PACKAGE / "__init__.py", submodule_search_locations=[str(_PACKAGE)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"prelabel_eval: the handler package is missing from {_PACKAGE.parent}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["handler"] = module
    spec.loader.exec_module(module)
    return module


def _is_the_node(module: ModuleType) -> bool:
    """The node's own package (installed or a checkout), not a user's `handler.py`."""
    return any((Path(folder) / "pipeline.py").exists() for folder in getattr(module, "__path__", ()))


_HANDLER = _handler()
__all__ = list(_HANDLER.__all__)


def __getattr__(name: str) -> Any:
    return getattr(_HANDLER, name)
