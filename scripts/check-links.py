#!/usr/bin/env python3
"""Fails unless every relative link resolves, for `make docs`.

- Every HTML page under the given directory (the generated API reference: rustdoc, the
  Python and TypeScript pages): each `href` and `src` that is not absolute (`http:`,
  `mailto:`, ...) names a file that exists, and its `#fragment` an `id` or `name` in it
  (rustdoc's source line ranges, `#12-40`, are read by script and not checked).
- The Markdown documents a reader follows from the README (DOCS): each `[text](target)`
  outside code names a file or folder that exists, and a `#fragment` to a Markdown file a
  heading in it (GitHub's anchors: lower case, punctuation dropped, spaces as `-`).
Links to the web are not fetched (CI runs offline).

Usage: check-links.py [HTML_DIR]
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
DOCS = [
    "README.md", "docs/*.md", "bindings-py/README.md", "bindings-node/README.md", "bindings-wasm/README.md",
    "cli/README.md", "conformance/README.md", "examples/*/README.md",
]
SOURCE_LINES = re.compile(r"^\d+(-\d+)?$")


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (name == "name" and tag == "a"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.links.append(value)


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def external(target: str) -> bool:
    return bool(urlsplit(target).scheme) or target.startswith("//")


def check_html(directory: Path) -> tuple[int, list[str]]:
    pages: dict[Path, Page] = {}
    for path in sorted(directory.rglob("*.html")):
        page = Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        pages[path.resolve()] = page
    broken: list[str] = []
    count = 0
    for path, page in list(pages.items()):
        for link in page.links:
            if external(link) or link.startswith("javascript:"):
                continue
            count += 1
            parts = urlsplit(link)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if parts.path and not target.exists():
                broken.append(f"{shown(path)}: {link} (no such file)")
                continue
            if target.is_dir():
                target = target / "index.html"
            fragment = parts.fragment
            if not fragment or SOURCE_LINES.match(fragment) or target.suffix != ".html":
                continue
            held = pages.get(target)
            if held is None:  # a page outside the directory
                held = pages[target] = Page()
                held.feed(target.read_text(encoding="utf-8", errors="replace"))
            if fragment not in held.ids and unquote(fragment) not in {unquote(i) for i in held.ids}:
                broken.append(f"{shown(path)}: {link} (no #{fragment} there)")
    return count, broken


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown(path: Path) -> tuple[list[str], list[tuple[int, str]]]:
    """The anchors of a Markdown file's headings, and its links (line, target) outside code."""
    anchors: list[str] = []
    links: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchors.append(base if count == 0 else f"{base}-{count}")
        anchors += re.findall(r'<a (?:id|name)="([^"]+)"', line)
        code_free = re.sub(r"`[^`]*`", "", line)
        for match in re.finditer(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", code_free):
            links.append((number, match.group(1)))
    return anchors, links


def check_markdown() -> tuple[int, list[str]]:
    files = sorted({path.resolve() for pattern in DOCS for path in ROOT.glob(pattern)})
    broken: list[str] = []
    count = 0
    cache: dict[Path, list[str]] = {}
    for path in files:
        anchors, links = markdown(path)
        cache[path] = anchors
        for number, link in links:
            if external(link):
                continue
            count += 1
            parts = urlsplit(link)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            where = f"{path.relative_to(ROOT)}:{number}"
            if not target.exists():
                broken.append(f"{where}: {link} (no such file)")
                continue
            if parts.fragment and target.suffix == ".md":
                if target not in cache:
                    cache[target] = markdown(target)[0]
                if unquote(parts.fragment) not in cache[target]:
                    broken.append(f"{where}: {link} (no heading #{parts.fragment} there)")
    return count, broken


def main() -> int:
    broken: list[str] = []
    if len(sys.argv) > 1:
        count, found = check_html(Path(sys.argv[1]))
        print(f"check-links: {count} links in the HTML under {sys.argv[1]}, {len(found)} broken")
        broken += found
    count, found = check_markdown()
    print(f"check-links: {count} relative links in the Markdown docs, {len(found)} broken")
    broken += found
    for line in broken:
        print(f"  {line}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
