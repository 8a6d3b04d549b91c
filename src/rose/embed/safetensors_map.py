"""A safetensors file's one tensor as a read-only numpy view of a memory map: nothing is read until it is indexed.

The format is an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and byte range
(relative to the end of the header), then the raw little-endian data. safetensors' own numpy loader reads and copies
every tensor; a query needs a few rows of one. Every field is checked against the file before a byte is mapped, so
a truncated or foreign file is a clear error, never a misread matrix.
"""
from __future__ import annotations

from pathlib import Path

from rose.text import load_json
from rose.errors import EmbedUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# the float dtypes numpy reads natively (BF16 and the integer types have no use as embedding weights here)
DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8"}
MAX_HEADER = 100_000_000   # the format's own bound on the header


def map_single_tensor(path: Path) -> Any:
    """The file's only tensor (a `__metadata__` entry aside), mapped read-only."""
    import mmap

    from rose.embed import load_numpy

    np = load_numpy()
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        f.seek(0)
        head = f.read(8)
        if len(head) != 8:
            raise EmbedUnavailable(f"{path}: not a safetensors file (shorter than its header length)")
        n = int.from_bytes(head, "little")
        if not 0 < n <= min(MAX_HEADER, size - 8):
            raise EmbedUnavailable(f"{path}: not a safetensors file (header length {n} in a {size}-byte file)")
        try:
            header = load_json(f.read(n))
        except (UnicodeDecodeError, ValueError) as exc:
            raise EmbedUnavailable(f"{path}: unreadable safetensors header ({exc})") from None
        tensors = {k: v for k, v in header.items() if k != "__metadata__"} if isinstance(header, dict) else {}
        if len(tensors) != 1:
            raise EmbedUnavailable(f"{path}: expected one tensor, found {len(tensors)}")
        [(name, spec)] = tensors.items()
        dtype, shape, (begin, end) = _checked(path, name, spec)
        itemsize = np.dtype(dtype).itemsize
        count = 1
        for dim in shape:
            count *= dim
        start = 8 + n + begin
        if end - begin != count * itemsize or start + count * itemsize > size:
            raise EmbedUnavailable(f"{path}: tensor {name!r}'s byte range does not hold its shape {shape}")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)   # stays valid once the file is closed
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=start).reshape(shape)


def _checked(path: Path, name: str, spec: object) -> tuple[str, list[int], tuple[int, int]]:
    if not isinstance(spec, dict):
        raise EmbedUnavailable(f"{path}: tensor {name!r} has no description")
    dtype = DTYPES.get(spec.get("dtype"))   # type: ignore[arg-type]
    shape = spec.get("shape")
    offsets = spec.get("data_offsets")
    if dtype is None:
        raise EmbedUnavailable(f"{path}: tensor {name!r} has dtype {spec.get('dtype')!r}, not one of {sorted(DTYPES)}")
    if not (isinstance(shape, list) and shape and all(type(d) is int and d > 0 for d in shape)):
        raise EmbedUnavailable(f"{path}: tensor {name!r} has shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)
            and 0 <= offsets[0] <= offsets[1]):
        raise EmbedUnavailable(f"{path}: tensor {name!r} has byte range {offsets!r}")
    return dtype, shape, (offsets[0], offsets[1])
