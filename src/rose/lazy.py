"""A package's names loaded from their modules on first use (PEP 562), so importing the package costs nothing.

    def __getattr__(name: str) -> Any:
        return lazy.export(__name__, _WHERE, name, globals())

`_WHERE` maps each exported name to its module, relative to the package. The value is kept in the package's
namespace, so the next use of the name does not come back here.
"""
from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def export(package: str, where: Mapping[str, str], name: str, namespace: dict[str, Any]) -> Any:
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{package}.{module}"), name)
    namespace[name] = value
    return value
