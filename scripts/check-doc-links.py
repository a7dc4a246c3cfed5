#!/usr/bin/env python3
"""Checks that every relative link in the docs resolves: the file or folder exists and, for a link to a section of a
Markdown file, that the file has a heading with that anchor (GitHub's rule: lower case, punctuation dropped, spaces to
hyphens, -1, -2 ... for repeats).

    scripts/check-doc-links.py            # README.md, docs/*.md, benchmarks/*/README.md, benchmarks/results/HISTORY.md
    scripts/check-doc-links.py FILE ...   # those files only

Prints each broken link as file:line and exits 1 if there is one. Links to the web are not fetched."""
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
CODE_SPAN = re.compile(r"`+[^`]*`+")


def slug(heading: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading counts by its text
    text = re.sub(r"<[^>]+>", "", text)
    out = []
    for ch in text.lower():
        if ch in " -_" or unicodedata.category(ch)[0] in "LNM":
            out.append("-" if ch == " " else ch)
    return "".join(out)


def lines_outside_code(path: Path):
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


_anchors: dict[Path, set[str]] = {}


def anchors(path: Path) -> set[str]:
    if path not in _anchors:
        found: set[str] = set()
        seen: dict[str, int] = {}
        for _, line in lines_outside_code(path):
            found.update(HTML_ANCHOR.findall(line))
            match = HEADING.match(line)
            if not match:
                continue
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        _anchors[path] = found
    return _anchors[path]


def show(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def check(path: Path) -> list[str]:
    broken = []
    for number, line in lines_outside_code(path):
        text = CODE_SPAN.sub("", line)
        targets = INLINE_LINK.findall(text)
        ref = REFERENCE_DEF.match(text)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, mailto: ...
                continue
            file_part, _, fragment = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{show(path)}:{number}: {target}"
            if path.is_relative_to(ROOT) and not resolved.is_relative_to(ROOT):
                broken.append(f"{where}: outside the repository")
            elif not resolved.exists():
                broken.append(f"{where}: no such file or folder")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                broken.append(f"{where}: no heading #{fragment} in {show(resolved)}")
    return broken


def main() -> int:
    if len(sys.argv) > 1:
        files = [Path(a).resolve() for a in sys.argv[1:]]
    else:
        files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
                 *sorted((ROOT / "benchmarks").glob("*/README.md")), ROOT / "benchmarks/results/HISTORY.md"]
    broken = [b for f in files if f.exists() for b in check(f)]
    for b in broken:
        print(b)
    links = sum(len(INLINE_LINK.findall(CODE_SPAN.sub("", l))) for f in files if f.exists()
                for _, l in lines_outside_code(f))
    print(f"{len(files)} files, {links} links, {len(broken)} broken", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
