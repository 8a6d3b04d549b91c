"""Backends answer a prompt under a schema with one JSON object: claude, codex (CLIs), openai, anthropic (HTTP) and
scripted (tests). Each module is imported only when its backend is chosen; see base.py for the registry."""
from __future__ import annotations

from rose.judge.backends.base import (Backend, BackendReply, BackendRequest, auto_choice, make_backend,
                                      register_backend, registered)

__all__ = ["Backend", "BackendReply", "BackendRequest", "auto_choice", "make_backend", "register_backend",
           "registered"]
