"""Which JSON schemas OpenAI's strict structured-output mode accepts, as a pure function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ALLOWED_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})

#: Keywords strict mode refuses outright.
FORBIDDEN_KEYWORDS = (
    "default",
    "uniqueItems",
    "patternProperties",
    "if",
    "then",
    "else",
    "not",
    "allOf",
    "oneOf",
    "dependentRequired",
    "dependentSchemas",
)

MAX_OBJECT_DEPTH = 10
MAX_PROPERTIES = 5000


def _at(path: str, key: str) -> str:
    return f"{path}/{key}"


class _Checker:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.errors: list[str] = []
        self.properties = 0

    def err(self, path: str, message: str) -> None:
        self.errors.append(f"In context={path!r}, {message}")

    def check_ref(self, path: str, node: Mapping[str, Any]) -> None:
        siblings = sorted(k for k in node if k != "$ref")
        if siblings:
            self.err(path, f"'$ref' cannot have keywords {siblings!r} next to it.")
        ref = node["$ref"]
        if ref == "#":
            return
        if not isinstance(ref, str) or not ref.startswith(("#/$defs/", "#/definitions/")):
            self.err(path, f"reference {ref!r} must point into '#/$defs'.")
            return
        section, _, name = ref[2:].partition("/")
        defs = self.root.get(section)
        if not isinstance(defs, Mapping) or name not in defs:
            self.err(path, f"reference {ref!r} can't be resolved.")

    def check_types(self, path: str, node: Mapping[str, Any]) -> list[str]:
        raw = node.get("type")
        if raw is None:
            if not any(k in node for k in ("anyOf", "enum", "const")):
                self.err(path, "schema must have a 'type' key.")
            return []
        types = raw if isinstance(raw, list) else [raw]
        for name in types:
            if name not in ALLOWED_TYPES:
                self.err(path, f"type {name!r} is not supported; use one of {sorted(ALLOWED_TYPES)!r}.")
        return [t for t in types if isinstance(t, str)]

    def check_object(self, path: str, node: Mapping[str, Any], depth: int) -> None:
        if depth > MAX_OBJECT_DEPTH:
            self.err(path, f"objects are nested deeper than {MAX_OBJECT_DEPTH} levels.")
        if node.get("additionalProperties") is not False:
            self.err(path, "'additionalProperties' is required to be supplied and to be false.")
        properties = node.get("properties", {})
        if not isinstance(properties, Mapping):
            self.err(path, "'properties' must be an object.")
            properties = {}
        self.properties += len(properties)
        required = node.get("required", [])
        if not isinstance(required, list):
            self.err(path, "'required' must be an array.")
            required = []
        missing = [k for k in properties if k not in required]
        if missing:
            self.err(
                path,
                "'required' is required to be supplied and to be an array including "
                f"every key in properties. Missing {missing!r}.",
            )
        unknown = [k for k in required if k not in properties]
        if unknown:
            self.err(path, f"'required' names {unknown!r}, which are not in 'properties'.")
        for key, sub in properties.items():
            self.walk(_at(_at(path, "properties"), key), sub, depth + 1)

    def walk(self, path: str, node: Any, depth: int) -> None:
        if not isinstance(node, Mapping):
            self.err(path, f"schema must be an object, got {node!r}.")
            return
        if "$ref" in node:
            self.check_ref(path, node)
            return
        for key in FORBIDDEN_KEYWORDS:
            if key in node:
                self.err(path, f"{key!r} is not permitted.")
        types = self.check_types(path, node)
        if "enum" in node and (not isinstance(node["enum"], list) or not node["enum"]):
            self.err(path, "'enum' must be a non-empty array.")
        if "object" in types:
            self.check_object(path, node, depth)
        if "array" in types and "items" in node:
            items = node["items"]
            if isinstance(items, list):
                self.err(_at(path, "items"), "tuple-style 'items' arrays are not supported.")
            else:
                self.walk(_at(path, "items"), items, depth)
        if "anyOf" in node:
            options = node["anyOf"]
            if not isinstance(options, list) or not options:
                self.err(path, "'anyOf' must be a non-empty array of schemas.")
            else:
                for i, sub in enumerate(options):
                    self.walk(_at(_at(path, "anyOf"), str(i)), sub, depth)


def strict_schema_errors(schema: Any) -> list[str]:
    """Every reason OpenAI strict mode would refuse ``schema`` (empty when it is accepted).

    Each message names the JSON-pointer path of the offending subschema, e.g.
    ``In context='#/$defs/ExtractedMemory', 'additionalProperties' is required ...``.
    """
    if not isinstance(schema, Mapping):
        return [f"In context='#', schema must be an object, got {schema!r}."]
    checker = _Checker(schema)
    if schema.get("type") != "object" or "anyOf" in schema:
        checker.err("#", "the root schema must be of type 'object' and not use 'anyOf'.")
    checker.walk("#", schema, 1)
    for section in ("$defs", "definitions"):
        defs = schema.get(section)
        if defs is None:
            continue
        if not isinstance(defs, Mapping):
            checker.err(_at("#", section), f"{section!r} must be an object.")
            continue
        for name, sub in defs.items():
            checker.walk(_at(_at("#", section), name), sub, 1)
    if checker.properties > MAX_PROPERTIES:
        checker.err(
            "#",
            f"the schema has {checker.properties} properties; at most {MAX_PROPERTIES} are allowed.",
        )
    return checker.errors
