"""What PyYAML reads for a frontmatter head the fast reader accepted: the reference the fast reader is held to."""
from __future__ import annotations

from typing import Any

import pytest

from rose.store.frontmatter import load_yaml


def pyyaml_reading(head: str) -> Any:
    """PyYAML's reading of `head`; the test fails if PyYAML refuses what the fast reader accepted."""
    try:
        return load_yaml(head)
    except Exception:   # noqa: BLE001 - PyYAML refusing is a case the fast reader must not accept
        pytest.fail(f"fast reader accepted what PyYAML refuses: {head!r}")
