"""JSON schemas for judge answers: small builders, a fast validator for the subset rose uses, and the strict form.

Every call's answer schema is built from these helpers, so each one is strict by construction: every object has
`additionalProperties: false` and lists every property in `required` (optional fields are nullable instead of
absent). That is also what OpenAI's strict structured output demands, so one schema serves every backend.

Validation runs on every fresh answer and on every cache hit, including on the UserPromptSubmit hot path, so it is
done here in plain Python (well under a millisecond) rather than by importing `jsonschema` (~130 ms to import).
The validator covers exactly the keywords in SUPPORTED; `check_supported` refuses a schema that uses any other
keyword, and tests/judge cross-check every call's verdicts against `jsonschema` (Draft 2020-12) as the oracle.

`strict_form` strips the keywords that OpenAI's strict mode rejects (string lengths, uniqueItems); the bounds still
hold because rose validates every answer against the full schema itself.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

SUPPORTED = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "description",
    "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
})
STRICT_UNSUPPORTED = frozenset({"minLength", "maxLength"})

# -- builders ----------------------------------------------------------------------------------------------------


def obj(description: str = "", **properties: dict[str, Any]) -> dict[str, Any]:
    """A strict object: every property required, nothing else allowed."""
    out: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties),
                           "additionalProperties": False}
    if description:
        out["description"] = description
    return out


def string(description: str = "", *, min_length: int | None = None, max_length: int | None = None,
           pattern: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string"}
    if description:
        out["description"] = description
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    if pattern is not None:
        out["pattern"] = pattern
    return out


def text(description: str = "", max_length: int = 1000) -> dict[str, Any]:
    """A non-empty string with an upper bound: the usual shape of a reason, title or body."""
    return string(description, min_length=1, max_length=max_length)


def enum(*values: str, description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "enum": list(values)}
    if description:
        out["description"] = description
    return out


def boolean(description: str = "") -> dict[str, Any]:
    return {"type": "boolean", **({"description": description} if description else {})}


def number(description: str = "", *, minimum: float | None = None, maximum: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "number"}
    if description:
        out["description"] = description
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def array(items: dict[str, Any], description: str = "", *, min_items: int | None = None,
          max_items: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "items": items}
    if description:
        out["description"] = description
    if min_items is not None:
        out["minItems"] = min_items
    if max_items is not None:
        out["maxItems"] = max_items
    return out


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema or null: how an optional field is spelled when every property must be required."""
    if isinstance(schema.get("type"), str) and schema["type"] != "object":
        out = dict(schema)
        out["type"] = [schema["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


# -- the subset validator ----------------------------------------------------------------------------------------

_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}
_PATTERNS: dict[str, re.Pattern[str]] = {}


def _where(path: tuple[Any, ...]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def errors(schema: dict[str, Any], value: Any, path: tuple[Any, ...] = ()) -> list[str]:
    """Every way `value` breaks `schema` (empty when it fits), each as "$.path: what is wrong"."""
    out: list[str] = []
    if "anyOf" in schema:
        branches = [errors(branch, value, path) for branch in schema["anyOf"]]
        if all(branches):
            best = min(branches, key=len)
            out.append(f"{_where(path)}: matches none of the allowed shapes" + (f" ({best[0]})" if best else ""))
        return out
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if not any(_TYPES[k](value) for k in kinds):
            return [f"{_where(path)}: expected {' or '.join(kinds)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join("null" if v is None else str(v) for v in schema["enum"])
        out.append(f"{_where(path)}: {value!r} is not one of {allowed}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append(f"{_where(path)}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{_where(path)}: longer than {schema['maxLength']} characters ({len(value)})")
        if "pattern" in schema:
            pat = _PATTERNS.get(schema["pattern"]) or _PATTERNS.setdefault(schema["pattern"], re.compile(schema["pattern"]))
            if not pat.search(value):
                out.append(f"{_where(path)}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{_where(path)}: {value} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{_where(path)}: {value} is above {schema['maximum']}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{_where(path)}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{_where(path)}: more than {schema['maxItems']} items ({len(value)})")
        if "items" in schema:
            for i, item in enumerate(value):
                out.extend(errors(schema["items"], item, (*path, i)))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                out.append(f"{_where(path)}: missing required property {name!r}")
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in props:
                out.extend(errors(props[name], item, (*path, name)))
            elif extra is False:
                out.append(f"{_where(path)}: unexpected property {name!r}")
            elif isinstance(extra, dict):
                out.extend(errors(extra, item, (*path, name)))
    return out


def keywords(schema: Any) -> set[str]:
    """Every keyword used anywhere in a schema (property names excluded)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key == "properties":
                for sub in value.values():
                    found |= keywords(sub)
            elif key in ("items", "additionalProperties"):
                found |= keywords(value)
            elif key == "anyOf":
                for sub in value:
                    found |= keywords(sub)
    return found


def check_supported(schema: dict[str, Any], name: str) -> None:
    """Refuse, at definition time, a schema the validator cannot fully enforce or a non-strict object."""
    unknown = keywords(schema) - SUPPORTED
    if unknown:
        raise ValueError(f"schema of {name} uses unsupported keywords: {sorted(unknown)}")
    for sub in _objects(schema):
        props = set(sub.get("properties", {}))
        if sub.get("additionalProperties") is not False or set(sub.get("required", [])) != props:
            raise ValueError(f"schema of {name}: every object must be strict (all properties required, no extras)")


def _objects(schema: Any) -> Iterable[dict[str, Any]]:
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "object":
        yield schema
    for sub in schema.get("properties", {}).values():
        yield from _objects(sub)
    if isinstance(schema.get("items"), dict):
        yield from _objects(schema["items"])
    for sub in schema.get("anyOf", []):
        yield from _objects(sub)


def strict_form(schema: Any) -> Any:
    """A copy for OpenAI strict structured output (codex, openai backends): without the keywords it rejects."""
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in STRICT_UNSUPPORTED:
                continue
            if key == "properties":
                out[key] = {name: strict_form(sub) for name, sub in value.items()}
            elif key in ("items", "additionalProperties"):
                out[key] = strict_form(value)
            elif key == "anyOf":
                out[key] = [strict_form(sub) for sub in value]
            else:
                out[key] = value
        return out
    return schema
