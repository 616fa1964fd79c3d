"""rounds' checks on the patch of a fix, one rule a test: hostile changes made for real with git in a
temporary repository (or, where git would never write it, a real patch edited by hand), each refused with the
exact problem text that reaches the issue; and the commit that goes out is the checked patch, whatever the
tests do to the index or to git's own files afterwards."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from fix_samples import APP_TESTS, git, make_app
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.fixing.checks import Guard, check_changes, patch
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.patchcheck import check_patch
from rounds_bot.fixing.patchtests import is_test_file
from rounds_bot.fixing.worktree import open_worktree

pytestmark = pytest.mark.fix_loop
FIVE_MB = 5 * 1024 * 1024
TWO_TESTS = APP_TESTS + "\n    def test_empty(self):\n        self.assertEqual(average_price([]), 0)\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The sample app's checkout, with a second test, committed."""
    checkout = make_app(tmp_path / "app").checkout
    (checkout / "tests" / "test_pricing.py").write_text(TWO_TESTS)
    git(checkout, "commit", "--quiet", "-am", "a second test")
    return checkout


def changed(repo: Path, edit: dict[str, str | bytes | None]) -> bytes:
    """The patch rounds checks, for `edit` (path -> text, bytes, or None to delete) made in `repo`."""
    for path, content in edit.items():
        target = repo / path
        if content is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return staged(repo)


def staged(repo: Path) -> bytes:
    git(repo, "add", "--all")
    return patch(Git(repo), git(repo, "rev-parse", "HEAD"), git(repo, "write-tree"))


def problems(patch_bytes: bytes, protected: list[str] | None = None) -> list[str]:
    return check_patch(patch_bytes, protected=protected or [], max_diff_lines=200, max_bytes=65_536).problems


# --- size and content -----------------------------------------------------------------------------
def test_a_good_change_passes_with_its_files_lines_and_bytes(repo):
    fixed = (
        (repo / "app" / "pricing.py").read_text().replace("/ len(prices)", "/ len(prices) if prices else 0")
    )
    found = check_patch(
        changed(repo, {"app/pricing.py": fixed}), protected=[], max_diff_lines=200, max_bytes=65_536
    )
    assert found.ok and found.problems == []
    assert (found.files, found.added, found.deleted) == (["app/pricing.py"], 1, 1)
    assert found.bytes_added == len("    return sum(prices) / len(prices) if prices else 0\n")
    assert found.sha256 == hashlib.sha256(staged(repo)).hexdigest()


def test_a_five_megabyte_binary_is_refused_as_binary_and_by_its_bytes(repo):
    blob = os.urandom(FIVE_MB)
    found = problems(changed(repo, {"data/blob.bin": blob}))
    assert found == [
        "`data/blob.bin` is a binary file (`GIT binary patch`)",
        "the change adds 5,242,880 bytes; at most 65,536 are allowed",
    ]


def test_a_five_megabyte_file_on_one_line_passes_the_line_cap_but_not_the_byte_and_line_length_caps(repo):
    found = check_patch(
        changed(repo, {"app/bundle.js": "x" * FIVE_MB}), protected=[], max_diff_lines=200, max_bytes=65_536
    )
    assert found.lines == 1
    assert found.problems == [
        "`app/bundle.js` adds a line of 5,242,880 characters; at most 1,000 "
        "(minified or generated code is not a fix)",
        "the change adds 5,242,880 bytes; at most 65,536 are allowed",
    ]


def test_the_line_cap_counts_added_and_deleted_lines(repo):
    text = "".join(f"line{n} = {n}\n" for n in range(12))
    found = check_patch(
        changed(repo, {"app/new.py": text}), protected=[], max_diff_lines=10, max_bytes=65_536
    )
    assert found.problems == ["the change is 12 lines; at most 10 are allowed"]


# --- tests deleted or skipped ---------------------------------------------------------------------
def test_deleting_the_failing_test_file_is_refused(repo):
    assert problems(changed(repo, {"tests/test_pricing.py": None})) == [
        "`tests/test_pricing.py` is a test file and the change deletes it"
    ]


def test_removing_a_test_function_is_refused_unless_it_is_added_back(repo):
    without = TWO_TESTS.replace(
        "\n    def test_empty(self):\n        self.assertEqual(average_price([]), 0)\n", ""
    )
    assert problems(changed(repo, {"tests/test_pricing.py": without})) == [
        "`tests/test_pricing.py` removes the test `test_empty` and does not add it back"
    ]
    git(repo, "checkout", "--quiet", "--", ".")
    edited = TWO_TESTS.replace("average_price([]), 0)", "average_price([]), 0.0)")
    assert problems(changed(repo, {"tests/test_pricing.py": edited})) == []  # changed in place
    moved = {
        "tests/test_pricing.py": without,
        "tests/test_empty.py": TWO_TESTS.replace("test_mean", "test_x"),
    }
    assert problems(changed(repo, moved)) == []  # moved to another file


def test_a_removed_test_is_found_in_every_runtime_s_spelling():
    removed = {
        "app.test.js": ("  it('adds up', () => {", "the test `adds up`"),
        "pricing_test.go": ("func TestAverage(t *testing.T) {", "the test `TestAverage`"),
        "PriceTest.java": ("    @Test", "a test (`@Test`)"),
        "lib.rs": ("    #[test]", "a test (`#[test]`)"),
    }
    for path, (line, what) in removed.items():
        crafted = (
            f"diff --git a/{path} b/{path}\nindex {'1' * 40}..{'2' * 40} 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,2 +1,1 @@\n-{line}\n keep\n"
        ).encode()
        assert problems(crafted) == [f"`{path}` removes {what} and does not add it back"], path


@pytest.mark.parametrize(
    ("line", "marker"),
    [
        ('    @pytest.mark.skip(reason="flaky")', "@pytest.mark.skip"),
        ("    @pytest.mark.xfail", "@pytest.mark.xfail"),
        ('        pytest.skip("later")', "pytest.skip("),
        ('    @unittest.skip("later")', "@unittest.skip"),
        ('        self.skipTest("later")', ".skipTest("),
        ("it.skip('adds up', () => {", "it.skip"),
        ("describe.only('prices', () => {", "describe.only"),
        ("xit('adds up', () => {", "xit("),
        ("    @Disabled", "@Disabled"),
        ("    @Ignore", "@Ignore"),
        ('    t.Skip("later")', "t.Skip("),
    ],
)
def test_an_added_skip_marker_is_refused(repo, line, marker):
    skipped = TWO_TESTS.replace("    def test_empty(self):", f"{line}\n    def test_empty(self):")
    assert problems(changed(repo, {"tests/test_pricing.py": skipped})) == [
        f"`tests/test_pricing.py` adds a skip marker: `{marker}`"
    ]


def test_test_files_are_recognised_by_the_grouping_conventions():
    for path in ["tests/test_a.py", "a_test.go", "src/__tests__/a.js", "a.spec.ts", "src/test/FooTest.java"]:
        assert is_test_file(path), path
    for path in ["src/parser_unittest.cc", "tests/http.c", "ShopTests/CartTests.swift"]:  # GoogleTest, XCTest
        assert is_test_file(path), path
    for path in ["app/pricing.py", "src/a.js", "main.go", "src/Foo.java", "README.md", "src/parser.cc"]:
        assert not is_test_file(path), path


# --- protected paths ------------------------------------------------------------------------------
def test_a_new_conftest_is_refused_in_any_folder(repo):
    hook = "import os\n\ndef pytest_configure(config):\n    os.environ.get('GITHUB_TOKEN')\n"
    assert problems(changed(repo, {"tests/conftest.py": hook})) == [
        "`tests/conftest.py` is protected (conftest.py: pytest runs it)"
    ]


def test_an_edited_gitignore_is_refused(repo):
    assert problems(changed(repo, {".gitignore": "__pycache__/\nconftest.py\n"})) == [
        "`.gitignore` is protected (.gitignore: it hides files from rounds' checks)"
    ]


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("pyproject.toml", "pyproject.toml: pytest's configuration and the build backend"),
        ("sub/Makefile", "Makefile: make runs its recipes"),
        ("web/package.json", "package.json: npm runs its scripts"),
        ("src/evil.pth", "*.pth: Python runs its `import` lines at start-up"),
        (".cargo/config.toml", ".cargo/config.toml: cargo's `runner` runs every test binary"),
        (".GitHub/workflows/x.yml", ".github/"),
        ("deploy/prod.yml", "deploy/"),
    ],
)
def test_test_configuration_the_always_protected_paths_and_the_setting_s_are_refused_without_case(
    repo, path, rule
):
    assert problems(changed(repo, {path: "x = 1\n"}), protected=["deploy/"]) == [
        f"`{path}` is protected ({rule})"
    ]


# --- what git can hold besides files --------------------------------------------------------------
def test_a_symlink_is_refused(repo):
    (repo / "app" / "link").symlink_to("/etc/passwd")
    assert problems(staged(repo)) == ["`app/link` is a symbolic link"]


def test_a_submodule_and_an_executable_file_are_refused(repo):
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")
    (repo / "app" / "run.sh").write_text("echo hi\n")
    (repo / "app" / "run.sh").chmod(0o755)
    git(repo, "add", "app/run.sh")
    found = problems(patch(Git(repo), head, git(repo, "write-tree")))
    assert found == [
        "`app/run.sh` is made executable (mode 100755)",
        "`vendor/lib` is a submodule (mode 160000)",
    ]


# --- paths ----------------------------------------------------------------------------------------
def test_a_path_with_dot_dot_written_into_a_patch_is_refused(repo):
    real = changed(repo, {"app/outside.py": "x = 1\n"})
    crafted = real.replace(b"app/outside.py", b"../outside.py")
    assert problems(crafted) == ["`../outside.py` leaves the repository (`..`)"]


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        (b"/etc/cron.d/x", "`/etc/cron.d/x` is an absolute path"),
        (b"app/./x.py", "`app/./x.py` is not a plain normalised path"),
        (b"app//x.py", "`app//x.py` is not a plain normalised path"),
        (b"sub/.GIT/config", "`sub/.GIT/config` has a `.git` component (`.GIT`)"),
        (b".git./hooks/pre-commit", "`.git./hooks/pre-commit` has a `.git` component (`.git.`)"),
        (b"GIT~1/config", "`GIT~1/config` has a `.git` component (`GIT~1`)"),
    ],
)
def test_paths_that_are_not_plain_relative_paths_are_refused(repo, path, problem):
    crafted = changed(repo, {"app/new.py": "x = 1\n"}).replace(b"app/new.py", path)
    assert problems(crafted) == [problem]


def test_quoted_paths_are_decoded_byte_for_byte(repo):
    found = check_patch(
        changed(repo, {"app/café.py": "x = 1\n"}), protected=[], max_diff_lines=200, max_bytes=65_536
    )
    assert b'"b/app/caf\\303\\251.py"' in staged(repo) and found.ok and found.files == ["app/café.py"]
    git(repo, "reset", "--quiet", "--hard")
    git(repo, "clean", "--quiet", "-d", "--force")
    hostile = changed(repo, {'tests/ev\til "x`y".py': "x = 1\n"})
    assert b'"b/tests/ev\\til \\"x`y\\".py"' in hostile
    assert problems(hostile) == ['`tests/ev\\til "x\\x60y".py` is not a plain normalised path']


def test_renames_and_unreadable_patches_are_refused(repo):
    renamed = (
        b"diff --git a/app/pricing.py b/tests/conftest.py\nsimilarity index 100%\n"
        b"rename from app/pricing.py\nrename to tests/conftest.py\n"
    )
    assert problems(renamed) == [
        "the patch renames or copies a file (`app/pricing.py`, `tests/conftest.py`); "
        "rounds' patches never do",
        "`tests/conftest.py` is protected (conftest.py: pytest runs it)",
    ]
    real = changed(repo, {"app/new.py": "x = 1\ny = 2\n"})
    assert problems(real[: real.rindex(b"+y")]) == ["the patch cannot be read: the patch ends inside a hunk"]
    assert problems(b"From the model: trust me\n" + real) == [
        "the patch cannot be read: line 1 is not where a file's part starts"
    ]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    b"diff --git a/x b/x\n",
                    b"--- a/x\n+++ b/x\n",
                    b"@@ -1,2 +1,3 @@\n",
                    b" a\n+b\n-c\n",
                    b"\\ No newline at end of file\n",
                    b'diff --git "a/\\303" "b/\\1"\n',
                    b"GIT binary patch\nliteral 5\n",
                    b"new file mode 120000\n",
                    b"rename from x\n",
                ]
            ),
            st.binary(max_size=24),
        ),
        max_size=24,
    )
)
def test_any_bytes_are_an_answer_never_an_exception(parts):
    found = check_patch(b"".join(parts), protected=["x"], max_diff_lines=10, max_bytes=100)
    assert isinstance(found.problems, list)


# --- the commit is the checked patch --------------------------------------------------------------
def test_git_config_set_by_the_tests_is_put_back_before_rounds_runs_git_again(tmp_path):
    app = make_app(tmp_path / "app")
    checkout = Git(app.checkout)
    config = app.checkout / ".git" / "config"
    before = config.read_bytes()
    ran = tmp_path / "fsmonitor-ran"
    with open_worktree(checkout, "rounds/fix-y", checkout.head()) as tree:
        guard = Guard.before(checkout, tree)
        hook = f"touch {ran}; echo"
        subprocess.run(["git", "config", "core.fsmonitor", hook], cwd=tree.path, check=True)
        tampered = guard.after_tests(tree)
        git(tree.path, "status", "--porcelain")
    assert tampered == ["git's own `.git/config` was changed; rounds put it back"]
    assert config.read_bytes() == before and not ran.exists()


def test_a_file_git_ignores_written_by_the_model_is_refused(tmp_path):
    app = make_app(tmp_path / "app")
    checkout = Git(app.checkout)
    with open_worktree(checkout, "rounds/fix-z", checkout.head()) as tree:
        guard = Guard.before(checkout, tree)
        (tree.path / "tests" / "__pycache__").mkdir()
        (tree.path / "tests" / "__pycache__" / "test_pricing.cpython-311.pyc").write_bytes(b"\0poisoned")
        (tree.path / "app" / "pricing.py").write_text("def average_price(prices):\n    return 0\n")
        checked = check_changes(tree, guard, checkout, protected=[], max_diff_lines=200)
    assert checked.problems == [
        "`tests/__pycache__/test_pricing.cpython-311.pyc` is ignored by git: "
        "the tests would run it, a commit would not"
    ]
