"""The documentation names real things: the paths it mentions exist, the names it places in a file are defined
there, and its links lead to files of the repository.

The convention CONTRIBUTING.md follows: a name and the file that defines it are written together,
"`Source` in `rounds_bot/sources/base.py`" (`Class.member` for a field or method of a class). Every such
pair is checked against the file's syntax tree: a class, function or assignment of that name, at the top
level or in a class, not an import. A path with a placeholder (`rounds_bot/grouping/stacktrace/<runtime>.py`)
needs its folder.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
DOCUMENTS = [ROOT / "README.md", CONTRIBUTING, ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]

#: a backticked path into the package or the tests (a glob such as Rust's `tests/*.rs` is about users' code)
PATH = re.compile(r"`((?:rounds_bot|tests)/[^`\s*]*)`")
#: "`Name` in `path.py`", possibly across a line break
PAIR = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)` in\s+`((?:rounds_bot|tests)/[^`\s]+\.py)`")
#: a Markdown link to a file of the repository: [text](target), not a web address or an anchor alone
LINK = re.compile(r"\]\(((?!https?:|mailto:|#)[^)\s]+)\)")


def text(document: Path) -> str:
    return document.read_text(encoding="utf-8")


def pairs(markdown: str) -> list[tuple[str, str]]:
    return [(name, path) for name, path in PAIR.findall(markdown)]


@cache
def definitions(path: str) -> dict[str, set[str]]:
    """The names a module defines at its top level (key "") and in each of its classes (key: the class)."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    found: dict[str, set[str]] = {"": set()}

    def collect(body: list[ast.stmt], into: set[str], scope: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                into.add(node.name)
                if scope == "":
                    found[node.name] = set()
                    collect(node.body, found[node.name], node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                into.add(node.name)
            elif isinstance(node, ast.Assign):
                into.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
                into.add(node.target.id)
            elif isinstance(node, ast.If | ast.Try):
                # `if TYPE_CHECKING:` and fallbacks define names too
                for block in (node.body, node.orelse, *(h.body for h in getattr(node, "handlers", []))):
                    collect(block, into, scope)

    collect(tree.body, found[""], "")
    return found


def is_defined(name: str, path: str) -> bool:
    names = definitions(path)
    owner, _, member = name.rpartition(".")
    if owner:
        return member in names.get(owner, set())
    return name in names[""] or any(name in members for members in names.values())


def test_the_convention_finds_the_pairs_of_every_how_to():
    """A reworded page must not make the check below vacuous."""
    sections = re.split(r"^## ", text(CONTRIBUTING), flags=re.MULTILINE)
    how_tos = {s.splitlines()[0]: s for s in sections if s.startswith("How to add")}
    assert len(how_tos) == 3, sorted(how_tos)
    for title, section in how_tos.items():
        assert len(pairs(section)) >= 8, f"{title}: name the code as `Name` in `path.py`"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_mentioned_exists(document: Path):
    missing = []
    for path in set(PATH.findall(text(document))):
        if "<" in path:
            folder = path[: path.index("<")].rpartition("/")[0]
            exists = (ROOT / folder).is_dir()
        else:
            exists = (ROOT / path).exists()
        if not exists:
            missing.append(path)
    assert not missing, f"{document.name} mentions paths that do not exist: {sorted(missing)}"


def test_every_name_placed_in_a_file_is_defined_there():
    found = pairs(text(CONTRIBUTING))
    missing_files = sorted({path for _, path in found if not (ROOT / path).is_file()})
    assert not missing_files, f"CONTRIBUTING.md names files that do not exist: {missing_files}"
    undefined = [f"{name} in {path}" for name, path in found if not is_defined(name, path)]
    assert not undefined, f"CONTRIBUTING.md names what these files do not define: {undefined}"


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} +(.+?) *$", markdown, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_leads_to_a_file_of_the_repository(document: Path):
    broken = []
    for target in LINK.findall(text(document)):
        path, _, anchor = target.partition("#")
        linked = document.parent / path if path else document
        # an anchor into a page must be one of its headings' (the page is read only when it exists)
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(text(linked))):
            broken.append(target)
    assert not broken, f"{document.name} links to what does not exist: {broken}"


def test_the_convention_tells_a_definition_from_an_import():
    assert is_defined("Source", "rounds_bot/sources/base.py")
    assert is_defined("Settings.tracker", "rounds_bot/settings/model.py")
    assert not is_defined("SUPPORTED_SPECS", "rounds_bot/sources/factory.py")  # imported there, not defined
    assert not is_defined("Settings.no_such_field", "rounds_bot/settings/model.py")
    assert pairs("`Source` in\n`rounds_bot/sources/base.py`") == [("Source", "rounds_bot/sources/base.py")]
    assert anchors("## `/rounds` commands in issue comments\n## How to add a runtime's parser") == {
        "rounds-commands-in-issue-comments",
        "how-to-add-a-runtimes-parser",
    }
