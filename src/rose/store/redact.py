"""The redactor moved to ``rose.redact`` (one module per detector family); this name re-exports its public API
for the existing callers. ``KINDS`` is resolved on first use, so importing this stays as cheap as ``rose.redact``.
"""
from __future__ import annotations

from rose.redact import PLACEHOLDER_RE, Finding, find_secrets, placeholder, redact, redact_data

__all__ = ["KINDS", "PLACEHOLDER_RE", "Finding", "find_secrets", "placeholder", "redact", "redact_data"]


def __getattr__(name: str) -> object:
    if name == "KINDS":
        import rose.redact
        return rose.redact.KINDS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
