"""Who owns a file, by the repository's CODEOWNERS: suggested in the issue, never mentioned (mentions notify).

GitHub reads `.github/CODEOWNERS`, then `CODEOWNERS`, then `docs/CODEOWNERS`; the last matching line wins.
Patterns follow gitignore: a leading `/` anchors at the root, a trailing `/` matches a folder and all below
it, `*` does not cross `/`, `**` does, and a pattern without `/` matches at any depth.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


def owners_of(checkout: Path, path: str) -> list[str]:
    """The owners of `path` (a repository path), or [] when no CODEOWNERS line matches."""
    for pattern, owners in reversed(_rules(checkout)):
        if pattern.search(path):
            return list(owners)
    return []


@cache
def _rules(checkout: Path) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    for location in LOCATIONS:
        file = checkout / location
        if file.is_file():
            return tuple(_parse(file.read_text(encoding="utf-8", errors="replace")))
    return ()


def _parse(text: str) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    rules = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pattern, *owners = line.split()
        rules.append((_compile(pattern), tuple(owners)))
    return rules


def _compile(pattern: str) -> re.Pattern[str]:
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    body = pattern.strip("/")
    regex = ""
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            regex, i = regex + "(?:.*/)?", i + 3
        elif body.startswith("**", i):
            regex, i = regex + ".*", i + 2
        elif body[i] == "*":
            regex, i = regex + "[^/]*", i + 1
        elif body[i] == "?":
            regex, i = regex + "[^/]", i + 1
        else:
            regex, i = regex + re.escape(body[i]), i + 1
    prefix = "^" if anchored else "^(?:.*/)?"
    # a folder pattern (or any name) also matches everything below it
    return re.compile(prefix + regex + "(?:/.*)?$")
