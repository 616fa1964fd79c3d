"""Test tampering in a patch: a test file deleted, a test definition removed and not added back, a skip
marker added. A fix makes the tests pass by changing the code, never by changing which tests run.
"""

from __future__ import annotations

import re
from collections import Counter

from rounds_bot.fixing.patchparse import FilePart
from rounds_bot.fixing.patchpaths import show
from rounds_bot.grouping.inapp import is_test_code
from rounds_bot.grouping.stacktrace.model import Runtime

#: how each runtime's source files end, to ask `grouping/inapp.py` whether a deleted file is a test
_RUNTIMES: dict[str, Runtime] = {
    **dict.fromkeys(("py",), "python"),
    **dict.fromkeys(("js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"), "node"),
    **dict.fromkeys(("go",), "go"),
    **dict.fromkeys(("rb",), "ruby"),
    **dict.fromkeys(("rs",), "rust"),
    **dict.fromkeys(("php",), "php"),
    **dict.fromkeys(("ex", "exs"), "elixir"),
    **dict.fromkeys(("java", "kt", "kts", "scala", "groovy"), "java"),
    **dict.fromkeys(("cs", "fs", "vb"), "dotnet"),
    **dict.fromkeys(("c", "cc", "cpp", "cxx", "h", "hh", "hpp", "m", "mm", "swift"), "native"),
    **dict.fromkeys(("dart",), "dart"),
}

#: a test definition on a line: (what it is, its name when the line names it)
_TEST_DEFINITIONS = (
    ("def test", re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(")),  # pytest, unittest
    ("func Test", re.compile(r"^\s*func\s+(Test\w*)\s*\(")),  # go test
    ("it(", re.compile(r"(?<![\w.$])(?:it|test|specify)\s*\(\s*(['\"`])(.*?)\1")),  # jest, mocha, vitest
    ("@Test", re.compile(r"^\s*@Test\b()")),  # JUnit
    ("#[test]", re.compile(r"^\s*#\[(?:tokio::)?test\b()")),  # cargo test
)
#: a marker that skips a test (or every other test, `.only`), or makes a failure count as a pass
_SKIP_MARKERS = re.compile(
    r"@pytest\.mark\.(?:skip|skipif|xfail)\b"
    r"|\bpytest\.(?:skip|xfail|importorskip)\s*\("
    r"|@unittest\.(?:skip\w*|expectedFailure)\b"
    r"|\.skipTest\s*\(|\braise\s+(?:unittest\.)?SkipTest\b"
    r"|^\s*__test__\s*=\s*False\b"
    r"|\b(?:it|test|describe|context|suite|specify)\.(?:skip|only)\b"
    r"|\bthis\.skip\s*\("
    r"|(?<![\w.$])(?:xit|xtest|xdescribe|xcontext|fit|fdescribe)\s*\("
    r"|@Disabled\w*|@Ignore\b|\[Ignore\b|\bSkip\s*=\s*\""
    r"|\b(?:t|b|tb)\.Skip(?:f|Now)?\s*\("
    r"|#\[ignore\b"
    r"|\bmarkTest(?:Skipped|Incomplete)\s*\("
)


def test_problems(files: list[FilePart]) -> list[str]:
    """Test definitions removed and not added back anywhere in the patch; skip markers added."""
    removed: Counter[tuple[str, str]] = Counter()
    added: Counter[tuple[str, str]] = Counter()
    for part in files:
        if not (part.deleted_file and is_test_file(part.path)):  # reported as a deleted test file
            removed.update(_definitions(part.removed_lines))
        added.update(_definitions(part.added_lines))
    missing = removed - added
    problems = []
    for part in files:
        for kind, name in _definitions(part.removed_lines):
            if missing[(kind, name)] > 0 and not (part.deleted_file and is_test_file(part.path)):
                missing[(kind, name)] -= 1
                what = f"the test `{show(name)}`" if name else f"a test (`{kind}`)"
                problems.append(f"`{show(part.path)}` removes {what} and does not add it back")
        markers = Counter(_markers(part.added_lines)) - Counter(_markers(part.removed_lines))
        problems += [f"`{show(part.path)}` adds a skip marker: `{marker}`" for marker in markers]
    return problems


def _definitions(lines: list[str]) -> list[tuple[str, str]]:
    found = []
    for line in lines:
        for kind, pattern in _TEST_DEFINITIONS:
            match = pattern.search(line)
            if match is not None:
                found.append((kind, match.group(match.lastindex or 0)[:120]))
                break
    return found


def _markers(lines: list[str]) -> list[str]:
    return [match.group(0).strip()[:40] for line in lines for match in _SKIP_MARKERS.finditer(line)]


def is_test_file(path: str) -> bool:
    """A test by the conventions of the runtimes' test runners (`grouping/inapp.py`), from its path."""
    stem, dot, extension = path.rpartition(".")
    runtime = _RUNTIMES.get(extension.lower()) if dot else None
    return runtime is not None and is_test_code(stem.replace("/", "."), path, runtime)
