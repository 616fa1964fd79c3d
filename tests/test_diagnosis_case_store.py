"""The case builder's source store (tools/diagnosis_cases/store.py): a file identical at two revisions is
stored once, each case keeps its fault's files and its crash site's, and the eval reads back what it wrote;
the sample service's situations table names the row it cannot read."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.eval.cases import load_cases
from rounds_bot.eval.runner import Eval
from tools.diagnosis_cases import scenarios
from tools.diagnosis_cases.store import SourceStore, has_commit, needed_files

JAVA_TRACE = """java.lang.NullPointerException
\tat org.demo.Parser.parse(Parser.java:4)
\tat org.demo.Reader.read(Reader.java:3)
\tat org.demo.Main.run(Main.java:2)
\tat org.demo.ParserTest.testParse(ParserTest.java:9)"""


def git(repo: Path, *arguments: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    return subprocess.run(
        ["git", *identity, *arguments], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def commit(repo: Path, files: dict[str, str]) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change")
    return git(repo, "rev-parse", "HEAD")


def java_case(case_id: str, revision: str) -> dict[str, Any]:
    root = "src/main/java/org/demo"
    return {
        "id": case_id,
        "kind": "crash",
        "origin": {"dataset": "test", "reference": case_id},
        "service": "demo",
        "telemetry": [
            {
                "event_id": f"{case_id}-1",
                "timestamp": "2024-01-01T00:00:00+00:00",
                "service": "demo",
                "error_type": "java.lang.NullPointerException",
                "message": "",
                "stacktrace": JAVA_TRACE,
            }
        ],
        "repository": {
            "revision": revision,
            "files": [f"{root}/Main.java", f"{root}/Parser.java", f"{root}/Reader.java", f"{root}/Util.java"],
        },
        "truth": {
            "classification": "server_bug",
            "faults": [{"path": f"{root}/Util.java", "function": "trim", "start_line": 2, "end_line": 2}],
        },
    }


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q")
    root = "src/main/java/org/demo"
    sources = {
        f"{root}/{name}.java": f"class {name} {{\n  void {method}() {{\n    x();\n    y();\n  }}\n}}\n"
        for name, method in [("Main", "run"), ("Parser", "parse"), ("Reader", "read"), ("Util", "trim")]
    }
    first = commit(repo, {**sources, "LICENSE": "MIT licence text\n"})
    second = commit(repo, {f"{root}/Util.java": "class Util {\n  void trim() {\n    z();\n  }\n}\n"})
    return repo / ".git", first, second


def test_a_case_keeps_its_faults_files_and_its_crash_site_and_identical_files_are_stored_once(
    tmp_path, upstream
):
    git_dir, first, second = upstream
    cases = tmp_path / "cases"
    store = SourceStore(cases)
    for case in (java_case("one", first), java_case("two", second)):
        folder = cases / case["id"]
        folder.mkdir(parents=True)
        (folder / "case.json").write_text(json.dumps(case))
        # the fault's file, then the innermost frame's (Parser); the outer frames' files are left out
        assert needed_files(case) == [
            "src/main/java/org/demo/Util.java",
            "src/main/java/org/demo/Parser.java",
        ]
        assert store.write_case(case, folder, git_dir) == 2
    assert store.write_licences("demo", git_dir) == ["LICENSE"]
    # Parser.java is the same at both revisions: three objects, not four
    assert len(store.added) == 3 and len([p for p in (cases / "_sources").rglob("*") if p.is_file()]) == 4
    manifest = json.loads((cases / "two" / "sources.json").read_text())
    assert manifest["revision"] == second
    assert sorted(manifest["files"]) == sorted(needed_files(java_case("two", second)))
    loaded = load_cases(cases)
    assert [item.stored for item in loaded] == [True, True]
    runner = Eval(loaded, tmp_path / "out")
    assert (runner.cases[1].sources or Path()).joinpath("src/main/java/org/demo/Util.java").read_text() == (
        "class Util {\n  void trim() {\n    z();\n  }\n}\n"
    )


def test_a_revision_the_clone_lacks_is_found_out_before_building(upstream):
    git_dir, first, _ = upstream
    assert has_commit(git_dir, first) and not has_commit(git_dir, "0" * 40)


def test_a_row_of_the_situations_table_it_cannot_read_is_named(tmp_path):
    table = tmp_path / "scenarios.toml"
    table.write_text(
        '[[dependency]]\nid = "dep-x"\nroute = "GET /"\nstatus = 502\nmessage = "m"\nplase = "cache"\n'
    )
    with pytest.raises(ValueError, match=r"dep-x: .*plase"):
        scenarios.scenarios(table)
    table.write_text(
        '[[dependency]]\nid = "dep-y"\nroute = "GET /"\nstatus = 502\nmessage = "m"\nplace = "moon"\n'
    )
    with pytest.raises(ValueError, match="dep-y: no place 'moon'"):
        scenarios.scenarios(table)
    assert len(scenarios.cases()) == 50
