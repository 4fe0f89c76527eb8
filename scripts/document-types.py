#!/usr/bin/env python3
"""Writes the typed topology documents of both languages from docs/topology.schema.json, the
one description of the document (tested against the core parser by
conformance/schema_tests/test_topology_schema.py):

- bindings-py/python/shardroute/documents.py: a TypedDict per object of the schema
  (`Topology`, `RingStrategy`, `AddNodeOperation`, ...) and a union per choice
  (`Strategy`, `Operation`);
- the "document types" block of bindings-js/index.d.ts, the declarations both npm
  packages ship: the same as TypeScript interfaces and unions.

    scripts/document-types.py           # rewrite both
    scripts/document-types.py --check   # exit 1 if either is not what the schema gives (make test-schema)

What a schema says that a type cannot (ranges, patterns, the rules between fields) stays
in the schema. `null`, which the core reads as absent, is left out of optional fields: a
typed document omits the field. u64 fields take an integer or a decimal string, and in
TypeScript also a bigint (the packages write bigints as decimal strings).

The schema's shapes this understands, and so the ones it may use: `$ref` to `$defs`;
closed objects with a `title` (one type each); `anyOf`/`oneOf`, `enum`, `const`, `type`
(a name or a list), arrays (`items`, `prefixItems`), maps (`additionalProperties` as a
schema); a choice by one field, as `allOf` of `if`/`then` entries whose `then` is a `$ref`.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMA_PATH = ROOT / "docs" / "topology.schema.json"
PYTHON_PATH = ROOT / "bindings-py" / "python" / "shardroute" / "documents.py"
TS_PATH = ROOT / "bindings-js" / "index.d.ts"
TS_BEGIN = "// BEGIN document types: made by scripts/document-types.py from docs/topology.schema.json (edit those)\n"
TS_END = "// END document types\n"

# Aliases whose values JavaScript also gives as bigint.
BIGINT_ALIASES = {"U64", "PositiveU64", "Token"}


class Schema:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs: dict[str, dict[str, Any]] = schema["$defs"]

    def target(self, ref: str) -> dict[str, Any]:
        if ref == "#":
            return self.schema
        match = re.fullmatch(r"#/\$defs/(\w+)", ref)
        assert match, f"unsupported $ref {ref}"
        return self.defs[match[1]]

    def named(self) -> list[dict[str, Any]]:
        """The root and every titled definition, in schema order."""
        return [self.schema] + [d for d in self.defs.values() if "title" in d]

    @staticmethod
    def is_object(node: dict[str, Any]) -> bool:
        return node.get("additionalProperties") is False and "properties" in node

    @staticmethod
    def choices(node: dict[str, Any]) -> list[str] | None:
        """The `$ref`s of a choice by one field (`allOf` of `if`/`then`), else None."""
        entries = node.get("allOf", [])
        refs = [entry["then"]["$ref"] for entry in entries if "if" in entry and "$ref" in entry.get("then", {})]
        return refs if refs and len(refs) == len(entries) and "properties" in node and not Schema.is_object(node) else None


class Emitter:
    """A type expression per schema node; `language` is "ts" or "py"."""

    def __init__(self, schema: Schema, language: str) -> None:
        self.schema = schema
        self.language = language

    def name_of(self, ref: str) -> str:
        return self.schema.target(ref)["title"]

    def literal(self, value: Any) -> str:
        if value is None:
            return "null" if self.language == "ts" else "None"
        if isinstance(value, bool):
            return ("true" if value else "false") if self.language == "ts" else ("True" if value else "False")
        if isinstance(value, str):
            return f"'{value}'" if self.language == "ts" else json.dumps(value)
        return str(value)

    def union(self, members: list[str]) -> str:
        unique = list(dict.fromkeys(members))
        if self.language == "ts":
            return " | ".join(unique)
        literals = [m[len("Literal[") : -1] for m in unique if m.startswith("Literal[")]
        others = [m for m in unique if not m.startswith("Literal[")]
        parts = ([f"Literal[{', '.join(literals)}]"] if literals else []) + others
        return parts[0] if len(parts) == 1 else " | ".join(parts)

    def base(self, name: str, node: dict[str, Any]) -> str:
        ts = self.language == "ts"
        if name in ("integer", "number"):
            return "number" if ts else ("int" if name == "integer" else "float")
        if name == "string":
            return "string" if ts else "str"
        if name == "boolean":
            return "boolean" if ts else "bool"
        if name == "null":
            return "null" if ts else "None"
        if name == "array":
            if "prefixItems" in node:
                items = [self.type(item) for item in node["prefixItems"]]
                return f"[{', '.join(items)}]" if ts else f"list[{self.union(items)}]"
            item = self.type(node["items"]) if "items" in node else ("unknown" if ts else "Any")
            return (f"({item})[]" if " " in item else f"{item}[]") if ts else f"list[{item}]"
        if name == "object":
            value = node.get("additionalProperties")
            assert "properties" not in node or value is not False, "a closed object needs a title and its own definition"
            inner = self.type(value) if isinstance(value, dict) else ("unknown" if ts else "Any")
            return f"Record<string, {inner}>" if ts else f"dict[str, {inner}]"
        raise AssertionError(f"unsupported type {name}")

    def type(self, node: dict[str, Any], optional: bool = False) -> str:
        """The type of `node`; `optional` drops null (an optional field is omitted, not null)."""
        keep = (lambda member: member not in ("null", "None")) if optional else (lambda member: True)
        if "$ref" in node:
            return self.name_of(node["$ref"])
        if "allOf" in node and len(node["allOf"]) == 1 and "$ref" in node["allOf"][0]:
            return self.name_of(node["allOf"][0]["$ref"])
        if "const" in node:
            return self.wrap_literals([node["const"]])
        if "enum" in node:
            values = [v for v in node["enum"] if not (optional and v is None)]
            return self.wrap_literals(values)
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self.union([m for m in (self.type(branch) for branch in node[key]) if keep(m)])
        kinds = node.get("type")
        if kinds is None:
            return "unknown" if self.language == "ts" else "Any"
        kinds = kinds if isinstance(kinds, list) else [kinds]
        return self.union([m for m in (self.base(kind, node) for kind in kinds) if keep(m)])

    def wrap_literals(self, values: list[Any]) -> str:
        if self.language == "ts":
            return " | ".join(self.literal(v) for v in values)
        literals = [self.literal(v) for v in values if v is not None]
        parts = ([f"Literal[{', '.join(literals)}]"] if literals else []) + (["None"] if None in values else [])
        return " | ".join(parts)


def references(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if "$ref" in node else set()
        return found.union(*(references(value) for key, value in node.items() if key != "$ref"))
    if isinstance(node, list):
        return set().union(*(references(value) for value in node))
    return set()


def comment(text: str, indent: str, language: str) -> list[str]:
    if language == "ts":
        return [f"{indent}/** {text} */"]
    return [f"{indent}# {line}" for line in wrap(text, 96 - len(indent))]


def wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def typescript(schema: Schema) -> str:
    emit = Emitter(schema, "ts")
    out = [TS_BEGIN, "\n"]
    for node in schema.named():
        name = node["title"]
        description = node.get("description")
        doc = [f"/** {description} */"] if description else []
        choices = Schema.choices(node)
        if Schema.is_object(node):
            out += [line + "\n" for line in doc]
            out.append(f"export interface {name} {{\n")
            required = set(node.get("required", []))
            for field, child in node["properties"].items():
                if "description" in child:
                    out.append(comment(child["description"], "  ", "ts")[0] + "\n")
                key = field if re.fullmatch(r"[A-Za-z_]\w*", field) else f"'{field}'"
                mark = "" if field in required else "?"
                out.append(f"  {key}{mark}: {emit.type(child, optional=field not in required)};\n")
            out.append("}\n\n")
        elif "title" in node:
            value = " | ".join(emit.name_of(ref) for ref in choices) if choices else emit.type(node)
            if name in BIGINT_ALIASES:
                value = value.replace("number | string", "number | bigint | string")
            out += [line + "\n" for line in doc]
            out.append(f"export type {name} = {value};\n\n")
    out.append(TS_END)
    return "".join(out)


# The top of the Python file (its comment, docstring and imports), kept as text beside
# this script.
PYTHON_HEADER = (pathlib.Path(__file__).resolve().parent / "documents-header.txt").read_text(encoding="utf-8")


def python(schema: Schema) -> str:
    emit = Emitter(schema, "py")
    classes: list[str] = []
    aliases: dict[str, tuple[str, set[str], list[str]]] = {}
    names: list[str] = []
    for node in schema.named():
        name = node["title"]
        names.append(name)
        description = node.get("description")
        choices = Schema.choices(node)
        if Schema.is_object(node):
            required = [f for f in node["properties"] if f in set(node.get("required", []))]
            optional = [f for f in node["properties"] if f not in required]
            identifier = lambda field: re.fullmatch(r"[A-Za-z_]\w*", field) is not None  # noqa: E731
            bases: list[str] = []
            lines: list[str] = []
            if required:
                lines.append(f"class _{name}Required(TypedDict):\n")
                for field in required:
                    child = node["properties"][field]
                    lines += [c + "\n" for c in comment(child["description"], "    ", "py")] if "description" in child else []
                    lines.append(f"    {field}: {emit.type(child)}\n")
                lines.append("\n\n")
                bases.append(f"_{name}Required")
            odd = [f for f in optional if not identifier(f)]
            if odd:
                fields = ", ".join(f"{json.dumps(f)}: {emit.type(node['properties'][f], optional=True)}" for f in odd)
                lines.append(f"_{name}Keys = TypedDict(\"_{name}Keys\", {{{fields}}}, total=False)\n\n\n")
                bases.append(f"_{name}Keys")
            lines.append(f"class {name}({', '.join(bases) or 'TypedDict'}, total=False):\n")
            if description:
                lines.append('    """' + "\n    ".join(wrap(description, 88)) + '"""\n')
            body = [f for f in optional if identifier(f)]
            for field in body:
                child = node["properties"][field]
                lines += [c + "\n" for c in comment(child["description"], "    ", "py")] if "description" in child else []
                lines.append(f"    {field}: {emit.type(child, optional=True)}\n")
            if not body and not description:
                lines.append("    pass\n")
            classes.append("".join(lines))
        else:
            value = " | ".join(emit.name_of(ref) for ref in choices) if choices else emit.type(node)
            base = node.get("allOf", [{}])[0].get("$ref") if not choices and len(node.get("allOf", [])) == 1 else None
            if base is not None and Schema.is_object(schema.target(base)):
                # Another name for an object type (a key object with more constraints): a
                # subclass, which type checkers treat alike and stubtest sees as a class.
                docstring = '    """' + "\n    ".join(wrap(description or name, 88)) + '"""\n'
                classes.append(f"class {name}({value}):\n{docstring}")
                continue
            doc = [c + "\n" for c in comment(description, "", "py")] if description else []
            depends = {schema.target(ref)["title"] for ref in references(node)}
            aliases[name] = (value, depends, doc)
    # Aliases are evaluated when the module loads: each after the aliases it names (class
    # annotations are not evaluated, so classes may come in any order, before them).
    ordered: list[str] = []
    while len(ordered) < len(aliases):
        ready = [n for n in aliases if n not in ordered and all(d in ordered or d not in aliases for d in aliases[n][1])]
        assert ready, "a cycle between aliases"
        ordered += ready
    out = [PYTHON_HEADER, "\n\n"]
    def assignment(name: str, value: str) -> str:
        if len(name) + len(value) <= 96:
            return f"{name} = {value}\n"
        return f"{name} = (\n    " + "\n    | ".join(value.split(" | ")) + "\n)\n"

    alias_lines = ["".join(aliases[n][2]) + assignment(n, aliases[n][0]) for n in ordered]
    out.append("\n".join(c.rstrip("\n") + "\n\n" for c in classes).rstrip("\n") + "\n\n\n")
    out.append("\n".join(alias_lines))
    out.append(f"\n\n__all__ = {json.dumps(sorted(names))}\n".replace('", "', '",\n    "').replace('["', '[\n    "').replace('"]', '",\n]'))
    return "".join(out)


def rendered() -> dict[pathlib.Path, str]:
    schema = Schema(json.loads(SCHEMA_PATH.read_text()))
    declarations = TS_PATH.read_text()
    start, end = declarations.index(TS_BEGIN), declarations.index(TS_END) + len(TS_END)
    return {
        PYTHON_PATH: python(schema),
        TS_PATH: declarations[:start] + typescript(schema) + declarations[end:],
    }


def main() -> int:
    check = sys.argv[1:] == ["--check"]
    stale = []
    for path, text in rendered().items():
        if path.exists() and path.read_text() == text:
            continue
        if check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"not what docs/topology.schema.json gives: {', '.join(stale)}; run scripts/document-types.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
