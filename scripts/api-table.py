#!/usr/bin/env python3
"""docs/api.md: every public name of the Python, Node and WASM packages side by side, and
the one naming rule per language, checked (issue 39, "One API shape").

Read from the committed declarations, never from a build:
- Python: bindings-py/python/shardroute/__init__.pyi (the native module and its types) and
  the pure-Python modules redis.py, etcd.py, http.py, zookeeper.py (their `__all__`;
  bases from _sources.py);
- Node: bindings-js/index.d.ts, http.d.ts, etcd.d.ts (shared with the WASM package) and
  bindings-node/redis.d.ts, zookeeper.d.ts;
- WASM: bindings-js/index.d.ts, http.d.ts, etcd.d.ts and bindings-wasm/web.d.ts; the
  route build (`shardroute-wasm/route`) from bindings-wasm/route.d.ts.
The document types (the topology format, between `BEGIN document types` and `END document
types` in index.d.ts, and shardroute.documents) are a data format, not API: left out.
A JS type whose doc comment has an `@format` tag (`SessionConfig`, `FollowerConfig`, the
`Source*Config`s, `SourceAction`) is the core's JSON too, passed as it is: listed, but its
fields are spelled as that format spells them, so the field rule does not apply to them.

The rule, per language:
- JS: functions, methods, getters, parameters and every field of an interface, a class or
  an object type written inline are camelCase (`js-name`, `js-param`, `js-field`);
  types PascalCase; constants UPPER_CASE. The fields of an `@format` type (and of the
  object types written inline in it) are the format's: not checked.
- Python: functions, methods, parameters and the fields of TypedDicts and NamedTuples are
  snake_case (`py-name`, `py-param`, `py-field`); classes PascalCase.
- Return shapes: no bare tuple in Python where the JS twin returns an object (`py-tuple`):
  a NamedTuple then (tuple unpacking keeps working), whose fields are the JS object's.

scripts/api-violations.txt lists the violations known today (debt, stated in docs/api.md).
`--check` fails on a violation not listed, on a listed one that is fixed (drop it from the
list: it only shrinks), and when docs/api.md is not what this script writes.

    python3 scripts/api-table.py            # write docs/api.md
    python3 scripts/api-table.py --check    # make check: fail on drift or a new violation
    python3 scripts/api-table.py --prune    # drop the fixed entries from the list (never adds)
    python3 scripts/api-table.py --root DIR # another tree with the same layout (the tests')
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = "docs/api.md"
VIOLATIONS = "scripts/api-violations.txt"
PY_DIR = "bindings-py/python/shardroute"

# One row group per module: (title, Python module and file, Node files, WASM files, WASM route files).
MODULES = [
    ("shardroute", "shardroute", "__init__.pyi",
     ["bindings-js/index.d.ts"], ["bindings-js/index.d.ts", "bindings-wasm/web.d.ts"], ["bindings-wasm/route.d.ts"]),
    ("redis", "shardroute.redis", "redis.py", ["bindings-node/redis.d.ts"], [], []),
    ("etcd", "shardroute.etcd", "etcd.py", ["bindings-js/etcd.d.ts"], ["bindings-js/etcd.d.ts"], []),
    ("http", "shardroute.http", "http.py", ["bindings-js/http.d.ts"], ["bindings-js/http.d.ts"], ["bindings-js/http.d.ts"]),
    ("zookeeper", "shardroute.zookeeper", "zookeeper.py", ["bindings-node/zookeeper.d.ts"], [], []),
]
JS_PACKAGES = {
    "shardroute": ("shardroute", "shardroute-wasm", "shardroute-wasm/route"),
    "redis": ("shardroute/redis", "", ""),
    "etcd": ("shardroute/etcd", "shardroute-wasm/etcd", ""),
    "http": ("shardroute/http", "shardroute-wasm/http", "shardroute-wasm/route/http"),
    "zookeeper": ("shardroute/zookeeper", "", ""),
}
# Python names whose JS twin is not their camelCase (a keyword, or a language's idiom).
RENAMED = {"delete": "del", "__new__": "constructor", "__init__": "constructor"}
# Python classes whose JS twin has another name (Python's would shadow a builtin).
RENAMED_CLASSES = {"ClusterUnavailable": "ConnectionError"}

JS_CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")
JS_PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
JS_CONST = re.compile(r"^[A-Z][A-Z0-9_]*$")
PY_SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
PY_PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
PY_CONST = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass
class Member:
    name: str
    kind: str  # constructor, method, static, property, field
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, type)
    returns: list[str] = field(default_factory=list)  # one per overload
    type: str = ""  # a field's or property's type
    optional: bool = False


@dataclass
class Decl:
    name: str
    kind: str  # class, record, tuple (a NamedTuple), function, const, alias
    members: dict[str, Member] = field(default_factory=dict)
    params: list[tuple[str, str]] = field(default_factory=list)
    returns: list[str] = field(default_factory=list)
    type: str = ""  # a const's or alias's type
    bases: list[str] = field(default_factory=list)
    source: str = ""  # the file that declares it (JS): a violation is named by it, once


def camel(name: str) -> str:
    if name in RENAMED:
        return RENAMED[name]
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# -- Python -------------------------------------------------------------------------


def _unparse(node: ast.AST | None) -> str:
    return "" if node is None else ast.unparse(node)


def _py_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str]]:
    args = fn.args
    out = []
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        if arg.arg in ("self", "cls") or arg.arg.startswith("_"):
            continue
        out.append((arg.arg, _unparse(arg.annotation)))
    return out


def _decorators(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {_unparse(d).split(".")[-1] for d in fn.decorator_list}


def _py_class(node: ast.ClassDef, classes: dict[str, ast.ClassDef], records: dict[str, str]) -> Decl:
    base_names = [_unparse(b).split(".")[-1] for b in node.bases]
    kind = "class"
    if "NamedTuple" in base_names:
        kind = "tuple"
    elif "TypedDict" in base_names or any(records.get(b) == "record" for b in base_names):
        kind = "record"
    decl = Decl(node.name, kind, bases=base_names)
    # Members of the bases first (those defined in the same files), then the class's own.
    for base in base_names:
        if base in classes and base != node.name:
            for name, member in _py_class(classes[base], classes, records).members.items():
                decl.members.setdefault(name, member)
    own: dict[str, Member] = {}
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            name = item.target.id
            if not name.startswith("_"):
                own[name] = Member(name, "field", type=_unparse(item.annotation))
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = item.name
            if name.startswith("_") and name not in ("__new__", "__init__"):
                continue
            decorators = _decorators(item)
            if "property" in decorators:
                own[name] = Member(name, "property", type=_unparse(item.returns))
                continue
            if name == "__init__":  # its public `self.x` attributes are fields
                for stmt in ast.walk(item):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
                    for target in targets:
                        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                                and target.value.id == "self" and not target.attr.startswith("_")):
                            kind_text = _unparse(stmt.annotation) if isinstance(stmt, ast.AnnAssign) else ""
                            if target.attr not in own or kind_text:
                                own[target.attr] = Member(target.attr, "field", type=kind_text)
            if name in ("__new__", "__init__"):
                if name == "__init__" and "__new__" in own:
                    continue
                name, kind = "__new__", "constructor"
            elif decorators & {"staticmethod", "classmethod"}:
                kind = "static"
            else:
                kind = "method"
            prev = own.get(name)
            returns = _unparse(item.returns)
            if isinstance(item, ast.AsyncFunctionDef):
                returns = f"Awaitable[{returns}]"
            if prev is not None and prev.kind == kind:
                prev.returns.append(returns)
                prev.params = _py_params(item)
            else:
                own[name] = Member(name, kind, _py_params(item), [returns])
    decl.members.update(own)
    if kind in ("record", "tuple"):
        decl.members = {k: v for k, v in decl.members.items() if v.kind == "field"}
    return decl


def _all_names(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return None


def parse_python(source: str, helpers: list[str] | None = None) -> dict[str, Decl]:
    """The public declarations of one Python module (a .pyi or a .py): its `__all__`, or
    every name not starting with `_`. `helpers`: modules whose classes may be bases."""
    tree = ast.parse(source)
    classes: dict[str, ast.ClassDef] = {}
    for text in [*(helpers or []), source]:
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef):
                classes[node.name] = node
    records: dict[str, str] = {}
    for name, node in classes.items():  # TypedDict bases, e.g. shardroute.FollowerStats
        bases = [_unparse(b).split(".")[-1] for b in node.bases]
        if "TypedDict" in bases or name.endswith("Stats") and any(b.endswith("Stats") for b in bases):
            records[name] = "record"
    for known in ("FollowerStats", "SessionStats", "Stats"):
        records.setdefault(known, "record")
    public = _all_names(tree)
    decls: dict[str, Decl] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            decls[node.name] = _py_class(node, classes, records)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            returns = _unparse(node.returns)
            if isinstance(node, ast.AsyncFunctionDef):
                returns = f"Awaitable[{returns}]"
            if node.name in decls:
                decls[node.name].returns.append(returns)
            else:
                decls[node.name] = Decl(node.name, "function", params=_py_params(node), returns=[returns])
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            decls[node.target.id] = Decl(node.target.id, "const", type=_unparse(node.annotation))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id != "__all__":
                    kind = "alias" if PY_PASCAL.match(target.id) and not PY_CONST.match(target.id) else "const"
                    decls[target.id] = Decl(target.id, kind, type=_unparse(node.value))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname and alias.asname == alias.name:
                    decls.setdefault(alias.name, Decl(alias.name, "alias", type=f"{node.module}.{alias.name}"))
    if public is None:
        public = [name for name in decls if not name.startswith("_")]
    return {name: decls[name] for name in public if name in decls and name != "documents"}


# -- TypeScript declarations --------------------------------------------------------

DOC_REGION = re.compile(r"// BEGIN document types.*?// END document types", re.S)


def _strip_comments(text: str) -> str:
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _split(text: str, sep: str) -> list[str]:
    """`text` split at `sep` outside brackets, braces, parentheses and type arguments."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "'\"":
            end = text.find(c, i + 1)
            i = end + 1 if end > 0 else len(text)
            continue
        if c == "=" and text.startswith("=>", i):
            i += 2
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _close(text: str, start: int) -> int:
    """The index of the bracket closing the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == ">" and text[i - 1] == "=":
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced: {text[start:start + 60]!r}")


def _statements(text: str) -> list[str]:
    out, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "'\"`":
            end = text.find(c, i + 1)
            i = end + 1
            continue
        if c == "=" and text.startswith("=>", i):
            i += 2
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0 and c == "}" and re.match(r"\s*(export\s+)?(declare\s+)?(class|interface)\b", text[start:]):
                out.append(text[start:i + 1].strip())
                start = i + 1
        elif c == ";" and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
        i += 1
    return [s for s in out if s]


def _ts_params(text: str) -> list[tuple[str, str]]:
    out = []
    for part in _split(text, ","):
        name, _, kind = part.partition(":")
        name = name.strip().lstrip(".").rstrip("?").strip()
        if name:
            out.append((name, kind.strip()))
    return out


def _ts_member(text: str) -> Member | None:
    text = re.sub(r"^((readonly|static|public|protected|declare|abstract)\s+)+", lambda m: "static " if "static" in m.group(0) else "", text)
    static = text.startswith("static ")
    text = text.removeprefix("static ").strip()
    if text.startswith("private ") or text.startswith("["):
        return None
    if text.startswith("constructor"):
        open_ = text.index("(")
        return Member("constructor", "constructor", _ts_params(text[open_ + 1:_close(text, open_)]))
    getter = re.match(r"get\s+(\w+)\s*\(\s*\)\s*:\s*(.*)$", text, re.S)
    if getter:
        return Member(getter.group(1), "property", type=getter.group(2).strip())
    if text.startswith("set "):
        return None
    method = re.match(r"([\w$]+)(\??)\s*(<[^(]*>)?\s*\(", text)
    if method:
        open_ = text.index("(", method.start(3) if method.group(3) else method.end(2))
        end = _close(text, open_)
        returns = text[end + 1:].strip().removeprefix(":").strip()
        return Member(method.group(1), "static" if static else "method", _ts_params(text[open_ + 1:end]), [returns])
    prop = re.match(r"""(['"]?[\w$]+['"]?)(\??)\s*:\s*(.*)$""", text, re.S)
    if prop:
        return Member(prop.group(1).strip("'\""), "field", type=prop.group(3).strip(), optional=bool(prop.group(2)))
    return None


def _ts_body(body: str, decl: Decl) -> None:
    for text in _split(body, ";"):
        member = _ts_member(text)
        if member is None:
            continue
        prev = decl.members.get(member.name)
        if prev is not None and prev.kind == member.kind and member.kind in ("method", "static"):
            prev.returns.extend(member.returns)
        else:
            decl.members[member.name] = member


@dataclass
class TsFile:
    decls: dict[str, Decl] = field(default_factory=dict)
    reexports: dict[str, str] = field(default_factory=dict)  # name -> name in index.d.ts
    star: bool = False  # `export * from './index.js'`
    documents: set[str] = field(default_factory=set)  # the document types' names
    formats: set[str] = field(default_factory=set)  # the types tagged `@format` (FORMAT_TAG)


# A doc comment with an `@format` tag, then the type it documents: the type is one of the
# core's JSON formats (a config, the source session's actions), passed as the JSON text a
# file or a vector holds, so its fields are spelled as that format spells them.
FORMAT_TAG = re.compile(r"/\*\*((?:(?!\*/).)*?@format\b(?:(?!\*/).)*)\*/\s*export\s+(?:declare\s+)?(?:interface|type|class)\s+(\w+)", re.S)


def parse_ts(text: str) -> TsFile:
    out = TsFile()
    out.formats = {match.group(2) for match in FORMAT_TAG.finditer(text)}
    region = DOC_REGION.search(text)
    if region:
        out.documents = set(re.findall(r"export\s+(?:interface|type)\s+(\w+)", region.group(0)))
        text = text[:region.start()] + text[region.end():]
    text = _strip_comments(text)
    imports: dict[str, str] = {}
    for stmt in _statements(text):
        stmt = re.sub(r"\s+", " ", stmt).strip()
        if stmt.startswith("import "):
            names = re.search(r"\{(.*)\}", stmt)
            for part in _split(names.group(1), ",") if names else []:
                original, _, local = part.partition(" as ")
                imports[(local or original).strip()] = original.strip()
            continue
        if re.match(r"export \* from", stmt):
            out.star = True
            continue
        listed = re.match(r"export (type )?\{(.*)\}", stmt)
        if listed:
            for part in _split(listed.group(2), ","):
                original, _, local = part.partition(" as ")
                out.reexports[(local or original).strip()] = original.strip()
            continue
        cls = re.match(r"(export )?(declare )?(class|interface) (\w+)\s*(<[^{]*?>)?\s*(extends ([^{]+?))?\s*(implements [^{]+)?\{", stmt)
        if cls:
            name, open_ = cls.group(4), cls.end() - 1
            kind = "class" if cls.group(3) == "class" else "record"
            decl = out.decls.get(name) or Decl(name, kind)
            if kind == "class":
                decl.kind = "class"
            if cls.group(7):
                for base in _split(cls.group(7), ","):
                    picked = re.match(r"Pick<\s*(\w+)\s*,(.*)>$", base)
                    if picked:
                        decl.bases.append(f"{imports.get(picked.group(1), picked.group(1))}:" +
                                          ",".join(re.findall(r"'(\w+)'", picked.group(2))))
                    elif not base.startswith("Omit<"):
                        decl.bases.append(imports.get(base, base))
            _ts_body(stmt[open_ + 1:_close(stmt, open_)], decl)
            out.decls[name] = decl
            continue
        fn = re.match(r"export declare function (\w+)\s*(<[^(]*>)?\s*\(", stmt)
        if fn:
            open_ = fn.end() - 1
            end = _close(stmt, open_)
            returns = stmt[end + 1:].strip().removeprefix(":").strip()
            if fn.group(1) in out.decls:
                out.decls[fn.group(1)].returns.append(returns)
            else:
                out.decls[fn.group(1)] = Decl(fn.group(1), "function", params=_ts_params(stmt[open_ + 1:end]), returns=[returns])
            continue
        const = re.match(r"export declare const (\w+)\s*:\s*(.*)$", stmt)
        if const:
            out.decls[const.group(1)] = Decl(const.group(1), "const", type=const.group(2))
            continue
        alias = re.match(r"export type (\w+)\s*(<[^=]*>)?\s*=\s*(.*)$", stmt)
        if alias:
            out.decls[alias.group(1)] = Decl(alias.group(1), "alias", type=alias.group(3))
    return out


@dataclass
class JsApi:
    decls: dict[str, Decl] = field(default_factory=dict)
    documents: set[str] = field(default_factory=set)
    formats: set[str] = field(default_factory=set)  # `@format` types: their fields are the format's


def js_api(root: Path, files: list[str]) -> JsApi:
    """The declarations of one JS entry: its files merged (route.d.ts re-exports index.d.ts's)."""
    api = JsApi()
    index = None
    for rel in files:
        path = root / rel
        if not path.exists():
            continue
        parsed = parse_ts(path.read_text())
        api.documents |= parsed.documents
        api.formats |= parsed.formats
        if parsed.star or parsed.reexports or any(":" in b for d in parsed.decls.values() for b in d.bases):
            if index is None:
                full = root / "bindings-js/index.d.ts"
                index = parse_ts(full.read_text()) if full.exists() else TsFile()
                for decl in index.decls.values():
                    decl.source = "bindings-js/index.d.ts"
            if parsed.star:
                api.decls.update(index.decls)
                api.documents |= index.documents
                api.formats |= index.formats
            for local, original in parsed.reexports.items():
                if original in index.decls:
                    api.decls[local] = index.decls[original]
                    if original in index.formats:
                        api.formats.add(local)
                elif original in index.documents:
                    api.documents.add(local)
        for name, decl in parsed.decls.items():
            decl.source = rel
            for base in list(decl.bases):
                if ":" in base and index is not None:  # Pick<FullMigration, 'readKeys' | 'writeKey'>
                    source, picked = base.split(":")
                    for picked_name in picked.split(","):
                        if source in index.decls and picked_name in index.decls[source].members:
                            decl.members.setdefault(picked_name, index.decls[source].members[picked_name])
            api.decls[name] = decl
    for decl in api.decls.values():  # interface X extends Y: Y's fields too (Y may be index.d.ts's)
        for base in decl.bases:
            if base not in api.decls and index is None and (root / "bindings-js/index.d.ts").exists():
                index = parse_ts((root / "bindings-js/index.d.ts").read_text())
            based = api.decls.get(base) or (index.decls.get(base) if index is not None else None)
            if based is not None and base != decl.name:
                for name, member in based.members.items():
                    decl.members.setdefault(name, member)
    return api


def inline_objects(type_text: str) -> list[tuple[str, Member]]:
    """The fields of every object type written inline in `type_text` (nested ones too)."""
    out = []
    i = 0
    while i < len(type_text):
        if type_text[i] == "{":
            end = _close(type_text, i)
            holder = Decl("", "record")
            _ts_body(type_text[i + 1:end], holder)
            for member in holder.members.values():
                out.append(("", member))
                out.extend(inline_objects(member.type))
                for _, kind in member.params:
                    out.extend(inline_objects(kind))
                for ret in member.returns:
                    out.extend(inline_objects(ret))
            i = end + 1
        else:
            i += 1
    return out


# -- shapes -------------------------------------------------------------------------

SCALARS_PY = {"str", "int", "float", "bool", "bytes", "None", "Any", "object"}


def py_shape(text: str, py: dict[str, Decl]) -> list[str]:
    """The structure of a Python type, outside in: 'list', 'map', then 'tuple', 'object'
    (a class, a TypedDict, a NamedTuple) or 'scalar'."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return ["scalar"]
    return _py_shape(node, py)


def _py_shape(node: ast.AST, py: dict[str, Decl]) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return py_shape(node.value, py)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        shapes = [s for s in (_py_shape(node.left, py), _py_shape(node.right, py)) if s != ["none"]]
        return shapes[0] if shapes else ["none"]
    if isinstance(node, ast.Constant) and node.value is None:
        return ["none"]
    if isinstance(node, ast.Subscript):
        head = _unparse(node.value).split(".")[-1]
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in ("Optional", "Awaitable"):
            return _py_shape(args[0], py)
        if head == "Coroutine":
            return _py_shape(args[-1], py)
        if head == "Union":
            shapes = [s for s in (_py_shape(a, py) for a in args) if s != ["none"]]
            return shapes[0] if shapes else ["none"]
        if head in ("list", "List", "Sequence", "Iterable", "Iterator", "set", "frozenset"):
            return ["list", *_py_shape(args[0], py)]
        if head in ("tuple", "Tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return ["list", *_py_shape(args[0], py)]
            return ["tuple"]
        if head in ("dict", "Dict", "Mapping"):
            return ["map", *_py_shape(args[-1], py)]
        return ["scalar"]
    name = _unparse(node).split(".")[-1]
    if name in ("tuple", "Tuple"):
        return ["tuple"]
    if name in SCALARS_PY:
        return ["scalar"]
    decl = py.get(name)
    if decl is not None and decl.kind in ("class", "record", "tuple"):
        return ["object"]
    return ["object"] if PY_PASCAL.match(name) and name not in ("Key",) and not name.startswith("NDArray") else ["scalar"]


SCALARS_JS = {"string", "number", "bigint", "boolean", "void", "unknown", "any", "never", "undefined",
              "Uint8Array", "Uint32Array", "BigUint64Array", "ArrayBuffer", "Key", "SaltedKey", "Milliseconds", "Revision"}


def js_shape(text: str, js: JsApi, seen: frozenset[str] = frozenset()) -> list[str]:
    text = text.strip()
    while text.startswith("(") and _close(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    options = [t for t in _split(text, "|") if t not in ("null", "undefined", "void")]
    if not options:
        return ["none"]
    text = options[0]
    if text.startswith("readonly "):
        text = text[len("readonly "):]
    if text.startswith("{"):
        return ["object"]
    if text.startswith("["):
        return ["tuple"]
    if text.endswith("[]"):
        return ["list", *js_shape(text[:-2], js, seen)]
    generic = re.match(r"^([\w.]+)\s*<(.*)>$", text, re.S)
    if generic:
        head, args = generic.group(1), _split(generic.group(2), ",")
        if head in ("Promise", "Required", "Readonly", "PromiseLike"):
            return js_shape(args[0], js, seen)
        if head in ("Array", "ReadonlyArray", "Iterable", "Set", "ReadonlySet"):
            return ["list", *js_shape(args[0], js, seen)]
        if head in ("Map", "ReadonlyMap", "Record"):
            return ["map", *js_shape(args[-1], js, seen)]
        return ["object"]
    if text in SCALARS_JS or text.startswith("'"):
        return ["scalar"]
    decl = js.decls.get(text)
    if decl is not None:
        if decl.kind == "alias" and text not in seen:
            return js_shape(decl.type, js, seen | {text})
        if decl.kind in ("class", "record"):
            return ["object"]
    if text in js.documents:
        return ["object"]
    return ["scalar"]


def bare_tuple(py_type: str, js_type: str, py: dict[str, Decl], js: JsApi) -> bool:
    """True when the Python type is a bare tuple where the JS one is an object (at the same
    depth of lists and maps)."""
    for p, j in zip(py_shape(py_type, py), js_shape(js_type, js)):
        if p == "tuple" and j == "object":
            return True
        if p != j or p not in ("list", "map"):
            return False
    return False


# -- pairing and checks -------------------------------------------------------------


@dataclass
class Module:
    title: str
    py_name: str
    py: dict[str, Decl]
    node: JsApi
    wasm: JsApi
    route: JsApi
    pairs: dict[str, str] = field(default_factory=dict)  # Python decl -> JS decl
    inline: dict[str, tuple[str, str]] = field(default_factory=dict)  # Python record -> (JS owner.member, type)


def js_twin(py_name: str, kind: str, js: JsApi) -> str | None:
    """The JS declaration a Python one pairs with by name."""
    candidates = [py_name, RENAMED_CLASSES.get(py_name, py_name)]
    if kind == "function":
        candidates = [camel(py_name.removesuffix("_async")), camel(py_name)]
    elif py_name.startswith("Async"):
        candidates.append(py_name.removeprefix("Async"))
    for name in candidates:
        if name in js.decls:
            return name
    return None


def member_twin(py_member: str, js_decl: Decl | None) -> str | None:
    if js_decl is None:
        return None
    for name in (camel(py_member), py_member.rstrip("_")):
        if name in js_decl.members:
            return name
    return None


def _record_name(py_type: str) -> str:
    """The record a Python return type names (`X`, `X | None`, `list[X]`, `Awaitable[X]`)."""
    names = re.findall(r"[A-Za-z_][\w.]*", py_type)
    names = [n.split(".")[-1] for n in names if n.split(".")[-1] not in
             ("list", "List", "Optional", "None", "Awaitable", "Sequence", "Iterable", "dict", "str", "int")]
    return names[0] if names else ""


def pair(module: Module) -> None:
    js = module.node if module.node.decls else module.wasm
    for name, decl in module.py.items():
        twin = js_twin(name, decl.kind, js)
        if twin:
            module.pairs[name] = twin
    # A Python record returned where the JS twin returns an inline object or an
    # interface of another name pairs with it.
    for name, decl in module.py.items():
        js_decl = js.decls.get(module.pairs.get(name, ""))
        members = [(m, m.returns[-1] if m.returns else m.type) for m in decl.members.values()]
        if decl.kind == "function":
            members = [(Member(name, "function"), decl.returns[-1] if decl.returns else "")]
        for member, ret in members:
            record = _record_name(ret)
            if record not in module.py or module.py[record].kind not in ("record", "tuple") or record in module.pairs:
                continue
            if decl.kind == "function":
                js_member = js.decls.get(module.pairs.get(name, ""))
                js_ret = js_member.returns[-1] if js_member and js_member.returns else ""
            else:
                twin = member_twin(member.name, js_decl)
                if twin is None or js_decl is None:
                    continue
                js_m = js_decl.members[twin]
                js_ret = js_m.returns[-1] if js_m.returns else js_m.type
            inner = re.sub(r"^(Promise|Array|ReadonlyArray)<(.*)>$", r"\2", js_ret.strip()).removesuffix("[]").removesuffix(" | null").strip()
            if inner in js.decls and js.decls[inner].kind == "record":
                module.pairs[record] = inner
            elif inner.startswith("{"):
                owner = f"{module.pairs.get(name, name)}.{camel(member.name)}()" if decl.kind != "function" else f"{camel(name)}()"
                module.inline[record] = (owner, inner)


def inline_decl(text: str) -> Decl:
    decl = Decl("", "record")
    _ts_body(text.strip()[1:-1], decl)
    return decl


def violations(modules: list[Module]) -> dict[str, str]:
    """Every violation of the rule: id -> why."""
    found: dict[str, str] = {}
    for module in modules:
        for js in (module.node, module.wasm, module.route):
            for decl in js.decls.values():
                where = f"{decl.source}:{decl.name}"
                data = decl.name in js.formats  # its fields are the format's (FORMAT_TAG)
                if decl.kind in ("class", "record", "alias") and not JS_PASCAL.match(decl.name):
                    found[f"js-name {where}"] = "a type is PascalCase"
                if decl.kind == "function" and not JS_CAMEL.match(decl.name):
                    found[f"js-name {where}"] = "a function is camelCase"
                if decl.kind == "const" and not (JS_CONST.match(decl.name) or JS_CAMEL.match(decl.name)):
                    found[f"js-name {where}"] = "a constant is UPPER_CASE or camelCase"
                types = [decl.type, *decl.returns, *(t for _, t in decl.params)]
                for pname, _ in decl.params:
                    if not JS_CAMEL.match(pname):
                        found[f"js-param {where}({pname})"] = "a parameter is camelCase"
                for member in decl.members.values():
                    mwhere = f"{where}.{member.name}"
                    if member.kind == "field":
                        if not data and not JS_CAMEL.match(member.name):
                            found[f"js-field {mwhere}"] = "a field is camelCase"
                    elif member.kind != "constructor" and not JS_CAMEL.match(member.name):
                        found[f"js-name {mwhere}"] = "a method or getter is camelCase"
                    for pname, _ in member.params:
                        if not JS_CAMEL.match(pname):
                            found[f"js-param {mwhere}({pname})"] = "a parameter is camelCase"
                    types += [member.type, *member.returns, *(t for _, t in member.params)]
                for text in types if not data else []:
                    for _, member in inline_objects(text):
                        if not JS_CAMEL.match(member.name):
                            found[f"js-field {where}.{{{member.name}}}"] = "a field of an inline object type is camelCase"
        for decl in module.py.values():
            where = f"{module.py_name}:{decl.name}"
            if decl.kind in ("class", "record", "tuple") and not PY_PASCAL.match(decl.name):
                found[f"py-name {where}"] = "a class is PascalCase"
            if decl.kind == "function" and not PY_SNAKE.match(decl.name):
                found[f"py-name {where}"] = "a function is snake_case"
            for pname, _ in decl.params:
                if not PY_SNAKE.match(pname):
                    found[f"py-param {where}({pname})"] = "a parameter is snake_case"
            for member in decl.members.values():
                mwhere = f"{where}.{member.name}"
                if member.kind == "field" and not PY_SNAKE.match(member.name.rstrip("_")):
                    if decl.kind in ("record", "tuple") or not PY_CONST.match(member.name):
                        found[f"py-field {mwhere}"] = "a field is snake_case"
                elif member.kind in ("method", "static", "property") and not PY_SNAKE.match(member.name):
                    found[f"py-name {mwhere}"] = "a method or property is snake_case"
                for pname, _ in member.params:
                    if not PY_SNAKE.match(pname):
                        found[f"py-param {mwhere}({pname})"] = "a parameter is snake_case"
        # Bare tuples where the JS twin is an object.
        js = module.node if module.node.decls else module.wasm
        for name, decl in module.py.items():
            js_decl = js.decls.get(module.pairs.get(name, ""))
            if js_decl is None:
                continue
            where = f"{module.py_name}:{name}"
            if decl.kind in ("record", "tuple"):  # the fields of a returned record
                for field_name, member in decl.members.items():
                    twin = member_twin(field_name, js_decl)
                    if twin and bare_tuple(member.type, js_decl.members[twin].type, module.py, js):
                        found[f"py-tuple {where}.{field_name}"] = f"a bare tuple; JS: {js_decl.members[twin].type}"
                continue
            if decl.kind == "function":
                if js_decl.returns and any(bare_tuple(ret, js_decl.returns[-1], module.py, js) for ret in decl.returns):
                    found[f"py-tuple {where}"] = f"returns a bare tuple; JS returns {js_decl.returns[-1]}"
                continue
            for member in decl.members.values():
                twin = member_twin(member.name, js_decl) if member.kind != "constructor" else None
                if twin is None:
                    continue
                js_m = js_decl.members[twin]
                py_types = member.returns or [member.type]
                js_t = js_m.returns[-1] if js_m.returns else js_m.type
                if js_t and any(t and bare_tuple(t, js_t, module.py, js) for t in py_types):
                    found[f"py-tuple {where}.{member.name}"] = f"a bare tuple; JS: {js_t}"
    return found


# -- the document -------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _py_sig(member: Member | Decl, name: str, owner: str = "") -> str:
    if isinstance(member, Member) and member.kind in ("field", "property"):
        typed = f"{name}: {_cell(member.type)}" if member.type else name
        return f"`{typed}`" + (" (property)" if member.kind == "property" else "")
    params = ", ".join(p for p, _ in member.params)
    ret = " / ".join(dict.fromkeys(member.returns))  # each overload's
    shown = owner if name == "__new__" else name
    return f"`{shown}({params})`" + (f" → `{_cell(ret)}`" if ret and name != "__new__" else "")


def _js_sig(member: Member | Decl, name: str, owner: str = "") -> str:
    if isinstance(member, Member) and member.kind in ("field", "property"):
        opt = "?" if member.optional else ""
        return f"`{name}{opt}: {_cell(member.type)}`" + (" (getter)" if member.kind == "property" else "")
    params = ", ".join(p for p, _ in member.params)
    ret = member.returns[-1] if member.returns else ""
    prefix = "new " if name == "constructor" else ("static " if isinstance(member, Member) and member.kind == "static" else "")
    shown = owner if name == "constructor" else name
    return f"`{prefix}{shown}({params})`" + (f": `{_cell(ret)}`" if ret else "")


def _has(js: JsApi, decl: str, member: str | None) -> bool:
    if decl not in js.decls:
        return False
    return member is None or member in js.decls[decl].members


def render(modules: list[Module], listed: dict[str, str]) -> str:
    lines = [
        "# The API in Python, Node and WASM, side by side",
        "",
        "<!-- Generated by scripts/api-table.py from the committed declarations (bindings-py/python/shardroute/"
        "__init__.pyi and its pure-Python modules, bindings-js/*.d.ts, bindings-node/*.d.ts, bindings-wasm/route.d.ts "
        "and web.d.ts). Do not edit: run `python3 scripts/api-table.py`; `make check` fails when this file is stale. -->",
        "",
        "Every public name of each package, one row per name: a Python name and its JS twin on one row "
        "(a blank cell: that package has no such name). The WASM package (`shardroute-wasm`) has the "
        "API of the Node addon (`shardroute`) minus what needs TCP or a native client (`shardroute/redis`, "
        "`shardroute/zookeeper`); its route build (`shardroute-wasm/route`) has the routing calls only "
        "(✓ in the last column). The topology document's types (`shardroute.documents` in Python, the "
        "document types of `index.d.ts`) are a data format whose field names are the JSON's: see "
        "[the topology format](guide.md) and `docs/topology.schema.json`.",
        "",
        "## The rule",
        "",
        "- **Python**: functions, methods, parameters and the fields of every returned record "
        "(`TypedDict`, `NamedTuple`) are `snake_case`; classes `PascalCase`. A call that returns several "
        "values returns a `NamedTuple` (tuple unpacking works) or a `TypedDict`, never a bare tuple where "
        "JS returns an object; its fields are the JS object's, in `snake_case` (`from` is `from_`, a "
        "Python keyword).",
        "- **JS (Node and WASM alike, one shared `index.d.ts`)**: functions, methods, getters, parameters "
        "and every field of a returned object are `camelCase`: the records a call returns (`KeyMove`, "
        "`Diff`, `Stats`, `NodeStats`, `SessionStats`, `WritePlan`, `LazySteps`, `Publish`, `EtcdCompare`, "
        "...) name the core's fields in `camelCase` (`fenceEpoch`, `movedPpm`, `expectedRevision`), and "
        "Python names the same fields in `snake_case` (`fence_epoch`). Types are `PascalCase`; constants "
        "`UPPER_CASE`.",
        "- **A field of a JSON format is spelled as the format spells it**, in every language: what a "
        "user passes that is the core's JSON (the topology document; `SessionConfig`, `FollowerConfig`, "
        "the `Source*Config`s) and what the core hands over as that JSON, as it is "
        "(`SourceAction`, `SourceSession.state`, `apply`'s report in `Applied`) are data, the same text a file or a vector holds "
        "(`max_redirects`, `reconnect_first_ms`, `retry_at`). In `index.d.ts` each such type says so with "
        "an `@format` tag in its doc comment (the document types sit between `BEGIN document types` and "
        "`END document types`); the field rule is not applied to its fields, and its records below say "
        "\"JSON format\".",
        "- The same concept has the same name in both, up to the case (`write_plan` / `writePlan`); "
        "Python's asyncio twins (`AsyncEtcd`, `publish_async`) share their JS twin's row.",
        "",
        "`python3 scripts/api-table.py --check` (in `make check`) fails on a name or field that breaks "
        "the rule unless it is listed below as known debt, and on a listed one that has been fixed "
        "(the list only shrinks: `scripts/api-violations.txt`; a name is never added to it to pass: "
        "it is named by the rule, or, for the fields of a JSON format, its type is tagged `@format`).",
        "",
        "### Known debt",
        "",
    ]
    if listed:
        kinds: dict[str, int] = {}
        for key in listed:
            kinds[key.split(" ")[0]] = kinds.get(key.split(" ")[0], 0) + 1
        said = {
            "js-field": "JS fields not in `camelCase` (outside an `@format` type)",
            "js-name": "JS functions or methods not in `camelCase`",
            "js-param": "JS parameters not in `camelCase`",
            "py-field": "Python fields not in `snake_case`",
            "py-name": "Python names not in `snake_case`",
            "py-param": "Python parameters not in `snake_case`",
            "py-tuple": "Python calls that return a bare tuple where the JS twin returns an object",
        }
        lines += [f"{len(listed)} names break the rule today:", ""]
        lines += [f"- {count} {said.get(kind, kind)} (`{kind}`);" for kind, count in sorted(kinds.items())]
        lines[-1] = lines[-1].removesuffix(";") + "."
        lines += [
            "",
            "| rule broken | declared in | owner | names |",
            "|---|---|---|---|",
        ]
        grouped: dict[tuple[str, str, str], list[str]] = {}
        for key in sorted(listed):
            kind, _, where = key.partition(" ")
            source, _, path = where.partition(":")
            owner, _, name = path.partition(".")
            grouped.setdefault((kind, source, owner), []).append(name or owner)
        for (kind, source, owner), names in sorted(grouped.items()):
            lines.append(f"| {kind} | `{source}` | `{owner}` | " + ", ".join(f"`{_cell(n)}`" for n in names) + " |")
    else:
        lines.append("None: every name follows the rule.")
    lines.append("")
    callbacks: list[str] = []
    for module in modules:
        node_pkg, wasm_pkg, route_pkg = JS_PACKAGES[module.title]
        js = module.node if module.node.decls else module.wasm
        heading = f"## `{module.py_name}` · `{node_pkg}`" + (f" · `{wasm_pkg}`" if wasm_pkg else "")
        lines += [heading, ""]
        header = ["| Python | Node | WASM | route |", "|---|---|---|---|"]
        # Top-level functions and constants.
        rows = []
        js_used: set[str] = set()
        for name, decl in sorted(module.py.items()):
            if decl.kind not in ("function", "const"):
                continue
            twin = module.pairs.get(name)
            js_used.add(twin or "")
            jd = js.decls.get(twin or "")
            rows.append((_py_sig(decl, name) if decl.kind == "function" else f"`{name}: {_cell(decl.type)}`",
                         twin, jd))
        for name, jd in sorted(js.decls.items()):
            if jd.kind in ("function", "const") and name not in js_used:
                rows.append(("", name, jd))
        for name, jd in sorted(module.wasm.decls.items()):
            if jd.kind in ("function", "const") and name not in js.decls:
                rows.append(("", name, jd))
        if rows:
            lines += ["### Functions and constants", "", *header]
            for py_cell, twin, jd in rows:
                js_cell = "" if jd is None or twin is None else (_js_sig(jd, twin) if jd.kind == "function" else f"`{twin}: {_cell(jd.type)}`")
                node_cell = js_cell if twin and twin in module.node.decls else ""
                wasm_cell = js_cell if twin and twin in module.wasm.decls else ""
                route_cell = "✓" if twin and twin in module.route.decls else ""
                lines.append(f"| {py_cell} | {node_cell} | {wasm_cell} | {route_cell} |")
            lines.append("")
        # Errors: one table.
        py_errors = sorted(n for n, d in module.py.items() if d.kind == "class" and is_error(d))
        js_errors = sorted({n for api in (module.node, module.wasm) for n, d in api.decls.items()
                            if d.kind == "class" and is_error(d)})
        if py_errors or js_errors:
            lines += ["### Errors", "", *header]
            for name in py_errors:
                lines.append(_error_row(module, module.py[name], module.pairs.get(name)))
            for name in js_errors:
                if name not in {module.pairs.get(n) for n in py_errors}:
                    lines.append(_error_row(module, None, name))
            lines.append("")
        # Classes.
        py_classes = sorted((n for n, d in module.py.items() if d.kind == "class" and not is_error(d)),
                            key=lambda n: (n.removeprefix("Async"), n.startswith("Async")))
        js_classes = sorted({n for api in (module.node, module.wasm) for n, d in api.decls.items()
                             if d.kind == "class" and not is_error(d)})
        paired_js = {module.pairs.get(n) for n in py_classes}
        groups: list[tuple[list[str], str | None]] = []
        by_twin: dict[str, list[str]] = {}
        for name in py_classes:
            by_twin.setdefault(module.pairs.get(name) or f"py:{name}", []).append(name)
        for twin, names in by_twin.items():
            groups.append((names, None if twin.startswith("py:") else twin))
        groups += [([], name) for name in js_classes if name not in paired_js]
        for names, twin in sorted(groups, key=lambda g: g[1] or g[0][0].removeprefix("Async")):
            title = " / ".join(f"`{n}`" for n in names) or "—"
            lines += [f"### {title} · `{twin or '—'}`", "", *header]
            jd = (module.node.decls.get(twin or "") or module.wasm.decls.get(twin or "")) if twin else None
            seen: set[str] = set()
            for py_name in names:
                decl = module.py[py_name]
                for mname, member in decl.members.items():
                    jt = "constructor" if member.kind == "constructor" else member_twin(mname, jd)
                    if jt == "constructor" and jd is not None and "constructor" not in jd.members:
                        jt = None
                    key = f"{jt or ''}|{mname}"
                    if key in seen:
                        continue
                    seen.add(key)
                    if jt:
                        seen.add(jt)
                    py_cell = _py_sig(member, mname, py_name) + ("" if py_name == names[0] else f" ({py_name})")
                    lines.append(_class_row(py_cell, twin, jt, module))
            for jname in (jd.members if jd else {}):
                if jname not in seen:
                    lines.append(_class_row("", twin, jname, module))
            lines.append("")
        # Records (what calls return and take).
        records = sorted(n for n, d in module.py.items() if d.kind in ("record", "tuple"))
        js_records = {module.pairs.get(n) for n in records}
        extra = sorted(n for n, d in js.decls.items() if d.kind == "record" and n not in js_records)
        if records or extra or module.inline:
            lines += ["### Records: the fields of what calls return and take", ""]
        for name in records:
            decl = module.py[name]
            twin = module.pairs.get(name)
            if twin:
                jd, jlabel = js.decls[twin], f"`{twin}`"
            elif name in module.inline:
                owner, text = module.inline[name]
                jd, jlabel = inline_decl(text), f"what `{owner}` returns"
            else:
                jd, jlabel = None, "—"
            kind = "NamedTuple" if decl.kind == "tuple" else "TypedDict"
            data = " · JSON format" if twin and twin in js.formats else ""
            lines += [f"#### `{name}` ({kind}) · {jlabel}{data}", "", "| Python | JS |", "|---|---|"]
            seen = set()
            for fname, member in decl.members.items():
                jt = member_twin(fname, jd)
                seen.add(jt or "")
                lines.append(f"| `{fname}: {_cell(member.type)}` | " +
                             (f"`{jt}{'?' if jd.members[jt].optional else ''}: {_cell(jd.members[jt].type)}`"
                              if jt and jd is not None else "") + " |")
            for jname, jm in (jd.members.items() if jd else []):
                if jname not in seen and jm.kind == "field":
                    lines.append(f"| | `{jname}{'?' if jm.optional else ''}: {_cell(jm.type)}` |")
            lines.append("")
        for name in extra:
            jd = js.decls[name]
            fields = [(n, m) for n, m in jd.members.items() if m.kind == "field"]
            if not fields:
                continue
            data = " · JSON format" if name in js.formats else ""
            lines += [f"#### — · `{name}`{data}", "", "| Python | JS |", "|---|---|"]
            for jname, jm in fields:
                lines.append(f"| | `{jname}{'?' if jm.optional else ''}: {_cell(jm.type)}` |")
            lines.append("")
        # Callbacks: JS option fields typed as functions; Python parameters typed Callable.
        for name, jd in sorted(js.decls.items()):
            for jname, jm in jd.members.items():
                if "=>" in jm.type:
                    sig = re.sub(r"\s*\|\s*null$", "", jm.type.strip())
                    if sig.startswith("(") and _close(sig, 0) == len(sig) - 1:
                        sig = sig[1:-1]
                    callbacks.append(f"| `{node_pkg}` | `{name}.{jname}` | `{_cell(sig)}` |")
        for name, decl in sorted(module.py.items()):
            for mname, member in decl.members.items():
                for pname, ptype in member.params:
                    if "Callable" in ptype:
                        where = name if mname == "__new__" else f"{name}.{mname}"
                        callbacks.append(f"| `{module.py_name}` | `{where}({pname}=...)` | `{_cell(ptype)}` |")
    if callbacks:
        lines += [
            "## Callbacks",
            "",
            "The signatures of every callback a package takes (JS: an options field typed as a "
            "function; Python: a keyword argument typed `Callable`). A callback that throws or raises "
            "is reported to `onError` / `on_error`; the follower goes on.",
            "",
            "| package | where | signature |",
            "|---|---|---|",
            *callbacks,
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def is_error(decl: Decl) -> bool:
    return any(base.endswith(("Error", "Exception")) for base in decl.bases)


def _error_row(module: Module, decl: Decl | None, twin: str | None) -> str:
    py_cell = ""
    if decl is not None:
        fields = [n for n, m in decl.members.items() if m.kind in ("field", "property")]
        py_cell = f"`{decl.name}({', '.join(decl.bases)})`" + (f": `.{'`, `.'.join(fields)}`" if fields else "")
    cells = []
    for api in (module.node, module.wasm):
        jd = api.decls.get(twin or "")
        if jd is None:
            cells.append("")
            continue
        fields = [n for n, m in jd.members.items() if m.kind in ("field", "property")]
        base = f" extends {', '.join(jd.bases)}" if jd.bases else ""
        cells.append(f"`{jd.name}{base}`" + (f": `.{'`, `.'.join(fields)}`" if fields else ""))
    route = "✓" if twin and twin in module.route.decls else ""
    return f"| {py_cell} | {cells[0]} | {cells[1]} | {route} |"


def _class_row(py_cell: str, twin: str | None, jt: str | None, module: Module) -> str:
    cells = []
    for api in (module.node, module.wasm):
        member = api.decls[twin].members.get(jt) if twin in api.decls and jt else None
        cells.append(_js_sig(member, jt, twin or "") if member is not None and jt else "")
    route = "✓" if twin in module.route.decls and jt and jt in module.route.decls[twin].members else ""
    return f"| {py_cell} | {cells[0]} | {cells[1]} | {route} |"


# -- main ---------------------------------------------------------------------------


def load(root: Path) -> list[Module]:
    helpers_path = root / PY_DIR / "_sources.py"
    helpers = [helpers_path.read_text()] if helpers_path.exists() else []
    init = root / PY_DIR / "__init__.pyi"
    if init.exists():
        helpers.append(init.read_text())
    modules = []
    for title, py_name, py_file, node_files, wasm_files, route_files in MODULES:
        path = root / PY_DIR / py_file
        py = parse_python(path.read_text(), helpers if py_file != "__init__.pyi" else helpers[:1]) if path.exists() else {}
        module = Module(title, py_name, py, js_api(root, node_files), js_api(root, wasm_files), js_api(root, route_files))
        pair(module)
        modules.append(module)
    return modules


def read_listed(path: Path) -> dict[str, str]:
    listed: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            entry, _, why = line.partition("#")
            entry = " ".join(entry.split())
            if entry:
                listed[entry] = why.strip()
    return listed


HEADER = """\
# Known violations of the API naming rule (scripts/api-table.py; docs/api.md states the rule).
# One per line: `kind package:Owner.name`. `make check` fails on a violation not listed here
# and on a listed one that is fixed: remove its line (`python3 scripts/api-table.py --prune`).
# Never add a line to make a new name pass: name it by the rule instead.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail on drift, a new violation or a fixed one still listed")
    parser.add_argument("--prune", action="store_true", help="drop fixed violations from the list (never adds one)")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    root = args.root
    modules = load(root)
    found = violations(modules)
    list_path = root / VIOLATIONS
    listed = read_listed(list_path)
    new = sorted(set(found) - set(listed))
    fixed = sorted(set(listed) - set(found))
    if args.prune and fixed:
        kept = [line for line in list_path.read_text().splitlines()
                if " ".join(line.partition("#")[0].split()) not in fixed]
        list_path.write_text("\n".join(kept) + "\n")
        print(f"api-table: dropped {len(fixed)} fixed violation(s) from {VIOLATIONS}")
        listed = read_listed(list_path)
        fixed = []
    text = render(modules, {k: v for k, v in listed.items() if k in found})
    doc = root / DOC
    failed = False
    for key in new:
        print(f"api-table: new violation: {key}: {found[key]} (name it by the rule; see {DOC})", file=sys.stderr)
        failed = True
    for key in fixed:
        print(f"api-table: fixed but still listed in {VIOLATIONS}: {key} (remove the line, or run with --prune)",
              file=sys.stderr)
        failed = True
    if args.check:
        if not doc.exists() or doc.read_text() != text:
            print(f"api-table: {DOC} is stale: run `python3 scripts/api-table.py` and commit it", file=sys.stderr)
            failed = True
    else:
        doc.parent.mkdir(parents=True, exist_ok=True)
        doc.write_text(text)
    print(f"api-table: {len(found)} violation(s), {len(found) - len(new)} listed as known debt, {len(new)} new, "
          f"{len(fixed)} fixed but listed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
