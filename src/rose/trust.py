"""`rose trust`: the user's explicit trust in one repository's `.rose/config.yaml`, pinned to its exact content.

A repository is untrusted input, so its config file cannot choose what rose runs or where it sends data (see
`config.Source`). A user who has read such a file and wants its privileged keys honoured pins it: the SHA-256 of the
file's bytes is recorded in the user's own global store (`~/.rose/trusted-configs.json`, mode 0600), keyed by the
file's real path. Any later change to the file (a pull, a teammate's commit) no longer matches the pin, so its
privileged keys are ignored again until the user looks and trusts it anew. The model is Codex's hook trust.
"""
from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path

from rose.text import load_json
from rose.typedrecord import Record

TRUST_FILE = "trusted-configs.json"


class TrustState(str, Enum):
    NONE = "none"         # never trusted: privileged keys ignored
    PINNED = "pinned"     # trusted, and the file is byte for byte what was trusted
    CHANGED = "changed"   # trusted once, changed since: privileged keys ignored until trusted again


class Pin(Record, frozen=True):
    path: str
    sha256: str
    at: str


def digest(path: Path) -> str | None:
    import hashlib   # here: ~8 ms (OpenSSL's library), and `rose doctor` needs it only for a pinned config

    try:
        from rose.store import reader   # what config.read_overrides would read, or nothing: no FIFO waited on

        return hashlib.sha256(reader.read_bytes(path, reader.SMALL, within=path.parent)).hexdigest()
    except OSError:
        return None


def _trust_path() -> Path:
    from rose.store.paths import global_root

    return global_root() / TRUST_FILE


def _key(path: Path) -> str:
    return os.path.realpath(path)


def _read() -> dict[str, dict[str, str]]:
    """The pins, only from the user's own store and a file only they could have written (0600, theirs): a pin
    another user could have made would let their repository choose what rose runs."""
    from rose.store import reader
    from rose.store.paths import own_store_problem

    if own_store_problem() is not None:
        return {}
    try:
        data = load_json(reader.read_private(_trust_path(), reader.RECORD))
    except (OSError, ValueError, RecursionError):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def state(path: Path) -> TrustState:
    pin = _read().get(_key(path))
    if pin is None:
        return TrustState.NONE
    return TrustState.PINNED if pin.get("sha256") == digest(path) else TrustState.CHANGED


def is_trusted(path: Path) -> bool:
    return state(path) is TrustState.PINNED


def _write(data: dict[str, dict[str, str]]) -> None:
    from rose.store.atomic import private_dir, write_text_atomic

    target = _trust_path()
    private_dir(target.parent)
    write_text_atomic(target, json.dumps(data, indent=1, sort_keys=True) + "\n", mode=0o600)


def pin(path: Path) -> Pin:
    """Trust the file's current content. Raises FileNotFoundError when there is no such file."""
    from rose.model import now_iso
    from rose.store.atomic import file_lock

    value = digest(path)
    if value is None:
        raise FileNotFoundError(path)
    with file_lock(_trust_path().parent / "locks" / "trust.lock"):
        data = _read()
        data[_key(path)] = {"sha256": value, "at": now_iso()}
        _write(data)
    return Pin(_key(path), value, data[_key(path)]["at"])


def revoke(path: Path) -> bool:
    from rose.store.atomic import file_lock

    with file_lock(_trust_path().parent / "locks" / "trust.lock"):
        data = _read()
        if data.pop(_key(path), None) is None:
            return False
        _write(data)
    return True


def pins() -> list[Pin]:
    return [Pin(k, str(v.get("sha256", "")), str(v.get("at", ""))) for k, v in sorted(_read().items())]
