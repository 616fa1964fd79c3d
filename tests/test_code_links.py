"""Links into the code: frames mapped to repository files, the revision that ran them, the suspect commit, and
the owners CODEOWNERS names — against a real git repository with history."""

from __future__ import annotations

import gc
import os
import subprocess
import weakref
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from signature_samples import a_signature

from rounds_bot.code import locate, mapping
from rounds_bot.code.history import resolve_revision, suspect_commit
from rounds_bot.code.locate import CodeLocator, LinkedFrame
from rounds_bot.code.mapping import CodeMap, PathRule, _wanted_suffix
from rounds_bot.code.owners import owners_of
from rounds_bot.errors import ConfigError
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace.model import Frame
from rounds_bot.models import ErrorEvent
from rounds_bot.render.code_section import code_section

T0 = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
PRICING_V1 = "\n".join(
    [
        "def quote_cart(cart):",
        "    return apply_discount(cart)",
        "",
        "",
        "def apply_discount(cart):",
        "    return cart['total']",
        "",
    ]
)
PRICING_V2 = PRICING_V1.replace("cart['total']", "cart['total'] * cart['currency']")
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/.venv/lib/python3.12/site-packages/fastapi/routing.py", line 301, in app\n'
    "    raw_response = await run_endpoint_function(\n"
    '  File "/srv/app/shop/pricing.py", line 2, in quote_cart\n'
    "    return apply_discount(cart)\n"
    '  File "/srv/app/shop/pricing.py", line 6, in apply_discount\n'
    "    return cart['total'] * cart['currency']\n"
    "KeyError: 'currency'\n"
)


def git(repo: Path, *args: str, at: datetime | None = None, author: str = "Ada Lovelace") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": author,
        "GIT_COMMITTER_EMAIL": "ada@example.com",
    }
    if at is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = at.isoformat()
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit(
    repo: Path, files: dict[str, str], message: str, at: datetime, author: str = "Ada Lovelace"
) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", *files)
    git(repo, "commit", "-q", "-m", message, at=at, author=author)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def shop(tmp_path) -> Path:
    """An app whose bug (`cart['currency']`) came in with a later commit, and a tag per release."""
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"shop/pricing.py": PRICING_V1, "shop/__init__.py": "", "README.md": "shop\n"}, "Start", T0)
    git(repo, "tag", "1.0.0")
    commit(
        repo,
        {"shop/pricing.py": PRICING_V2, ".github/CODEOWNERS": "* @acme/core\n/shop/ @acme/payments @grace\n"},
        "Charge in the cart's currency",
        T0 + timedelta(days=2),
        author="Grace Hopper",
    )
    git(repo, "tag", "v1.1.0")
    commit(repo, {"README.md": "shop, later\n"}, "Docs", T0 + timedelta(days=9))
    return repo


def test_a_runtime_path_maps_to_the_repository_file_with_the_longest_common_suffix():
    code_map = CodeMap(["shop/pricing.py", "shop/api/orders.py", "billing/pricing.py", "config.py"])
    assert code_map.repo_path(Frame("f", filename="/srv/app/shop/pricing.py")) == "shop/pricing.py"
    assert code_map.repo_path(Frame("f", filename="/app/shop/api/orders.py")) == "shop/api/orders.py"
    # a file name alone is not enough when the printed path says more, nor is a tie
    assert code_map.repo_path(Frame("f", filename="/srv/app/other/config.py")) is None
    assert code_map.repo_path(Frame("f", filename="/srv/pricing.py")) is None
    # installed code is never the repository's
    assert code_map.repo_path(Frame("f", filename="/app/.venv/lib/site-packages/shop/pricing.py")) is None


def test_java_frames_map_through_their_package_wherever_the_source_root_is():
    code_map = CodeMap(["inventory/src/main/java/com/acme/inventory/warehouse/WarehouseRegistry.java"])
    frame = Frame(
        "find", module="com.acme.inventory.warehouse.WarehouseRegistry", filename="WarehouseRegistry.java"
    )
    assert (
        code_map.repo_path(frame)
        == "inventory/src/main/java/com/acme/inventory/warehouse/WarehouseRegistry.java"
    )
    unknown = Frame("run", module="org.postgresql.Driver", filename="Driver.java")
    assert code_map.repo_path(unknown) is None


def test_explicit_mapping_rules_come_first_and_bad_ones_are_refused():
    code_map = CodeMap(["src/pricing.py"], rules=(PathRule.parse("/srv/app/=src/"),))
    assert code_map.repo_path(Frame("f", filename="/srv/app/pricing.py")) == "src/pricing.py"
    assert code_map.repo_path(Frame("f", filename="/srv/app/missing.py")) is None
    with pytest.raises(ConfigError, match="RUNTIME_PREFIX=REPO_PREFIX"):
        PathRule.parse("no-equals-sign")


def test_the_revision_comes_from_the_telemetry_or_a_tag_named_like_the_version(shop):
    first = git(shop, "rev-list", "--max-parents=0", "HEAD")
    assert resolve_revision(shop, vcs_revision=first, service_version=None) == first
    assert resolve_revision(shop, vcs_revision=None, service_version="1.1.0") == git(
        shop, "rev-parse", "v1.1.0"
    )
    assert resolve_revision(shop, vcs_revision=None, service_version="1.0.0") == git(
        shop, "rev-parse", "1.0.0"
    )
    assert resolve_revision(shop, vcs_revision="f" * 40, service_version="9.9") is None


def test_the_suspect_is_the_last_commit_to_touch_the_line_before_the_first_occurrence(shop):
    head = git(shop, "rev-parse", "HEAD")
    suspect = suspect_commit(shop, "shop/pricing.py", 6, revision=head, before=T0 + timedelta(days=3))
    assert suspect is not None
    assert (suspect.title, suspect.author) == ("Charge in the cart's currency", "Grace Hopper")
    # before that commit existed, the line's last change was the first commit
    earlier = suspect_commit(shop, "shop/pricing.py", 6, revision=head, before=T0 + timedelta(days=1))
    assert earlier is not None and earlier.title == "Start"
    assert suspect_commit(shop, "shop/pricing.py", 6, revision=head, before=T0 - timedelta(days=1)) is None


def test_codeowners_last_matching_line_wins(shop):
    assert owners_of(shop, "shop/pricing.py") == ["@acme/payments", "@grace"]
    assert owners_of(shop, "README.md") == ["@acme/core"]


def test_the_issue_section_links_in_app_frames_names_the_suspect_and_never_mentions_owners(shop):
    head = git(shop, "rev-parse", "HEAD")
    locator = CodeLocator(
        shop, CodeMap.of_checkout(shop), InAppRules(), repository="acme/shop", server="https://github.com"
    )
    representative = ErrorEvent(
        event_id="e1", timestamp=T0 + timedelta(days=3), error_type="KeyError", message="'currency'",
        stacktrace=TRACE, attributes={"vcs.ref.head.revision": head},
    )  # fmt: skip
    signature = a_signature("sig_1", representative=representative, first_seen="2026-10-04T00:00:00+00:00")
    context = locator.locate(signature)
    assert [(f.repo_path, f.line) for f in context.frames] == [("shop/pricing.py", 6), ("shop/pricing.py", 2)]
    assert context.frames[0].url == f"https://github.com/acme/shop/blob/{head}/shop/pricing.py#L6"
    assert context.suspect is not None and context.suspect.author == "Grace Hopper"
    section = code_section(context)
    assert f"[`shop/pricing.py:6`](https://github.com/acme/shop/blob/{head}/shop/pricing.py#L6)" in section
    assert f"https://github.com/acme/shop/commit/{context.suspect.sha}" in section
    assert "`@grace`" in section and " @grace" not in section
    assert "site-packages" not in section  # installed frames are not listed


def test_without_a_repository_frames_stay_plain_text(tmp_path):
    locator = CodeLocator(tmp_path, CodeMap([]), InAppRules(), repository=None, server="https://github.com")
    signature = a_signature(
        "sig_2", representative=ErrorEvent(event_id="e", timestamp=T0, stacktrace=TRACE, message="x")
    )
    context = locator.locate(signature)
    assert context.frames and all(f.url is None and f.repo_path is None for f in context.frames)
    assert "](" not in code_section(context) and "`/srv/app/shop/pricing.py:6`" in code_section(context)


def test_a_path_whose_file_name_is_not_in_the_checkout_maps_as_the_full_suffix_match_does():
    """A frame whose file name names no file of the checkout is answered before its path is split: the
    answer is the full suffix match's, for odd paths too (trailing slashes, `.` and `..` parts, a root)."""
    files = ["shop/pricing.py", "shop/api/orders.py", "inventory/com/acme/Warehouse.java", "b", "x.py"]
    printed = [
        "/srv/app/shop/pricing.py", "/srv/app/shop/unknown.py", "shop/api/orders.py/", "a//b", "a/b/.",
        "a/b/..", "/", "//", "//x.py", "./x.py", "x.py/.", "C:/shop/pricing.py", "Warehouse.java",
        "Missing.java", "shop/pricing.py//", "",
    ]  # fmt: skip
    code_map = CodeMap(files)
    for text in printed:
        frame = Frame("f", module="com.acme.Warehouse", filename=text)
        slow = code_map._longest_suffix_match(_wanted_suffix(frame, text)) if text else None
        assert code_map.repo_path(frame) == slow, text


def test_a_remembered_mapping_answers_as_the_map_does_for_each_path_and_module():
    files = [
        "inventory/src/main/java/com/acme/inventory/Warehouse.java",
        "billing/com/acme/billing/Warehouse.java",
    ]
    frames = [
        Frame("find", module="com.acme.inventory.Warehouse", filename="Warehouse.java"),
        Frame("bill", module="com.acme.billing.Warehouse", filename="Warehouse.java"),  # same file name
        Frame("other", module="org.example.Warehouse", filename="Warehouse.java"),
        Frame("find", module="com.acme.inventory.Warehouse", filename="Warehouse.java"),  # asked again
    ]
    remembering = CodeMap(files)
    answers = [remembering.repo_path(frame) for frame in frames]
    assert answers == [CodeMap(files).repo_path(frame) for frame in frames]  # a fresh map for each
    assert answers[:3] == [files[0], files[1], None] and answers[3] == answers[0]


@pytest.mark.parametrize("memo_size", [None, 1])
def test_signatures_sharing_frames_are_located_as_a_fresh_locator_locates_each(shop, memo_size, monkeypatch):
    """A locator remembers the frames it linked: the second signature through the same code gets what a
    locator that never saw the first would give it; so it does when its memos forget at every entry."""
    if memo_size is not None:
        monkeypatch.setattr(locate, "LINKED_MEMO_SIZE", memo_size)
        monkeypatch.setattr(mapping, "FOUND_MEMO_SIZE", memo_size)
    head = git(shop, "rev-parse", "HEAD")

    def locator() -> CodeLocator:
        return CodeLocator(
            shop, CodeMap.of_checkout(shop), InAppRules(), repository="acme/shop", server="https://github.com"
        )

    shallower = TRACE.replace('  File "/srv/app/shop/pricing.py", line 6, in apply_discount\n', "").replace(
        "    return cart['total'] * cart['currency']\n", ""
    )
    signatures = [
        a_signature(
            f"sig_{index}",
            representative=ErrorEvent(
                event_id=f"e{index}",
                timestamp=T0 + timedelta(days=3),
                error_type="KeyError",
                message="'currency'",
                stacktrace=trace,
                attributes={"vcs.ref.head.revision": head},
            ),
            first_seen="2026-10-04T00:00:00+00:00",
        )
        for index, trace in enumerate([TRACE, shallower, TRACE])
    ]
    shared = locator()
    located = [shared.locate(signature) for signature in signatures]
    assert located == [locator().locate(signature) for signature in signatures]
    assert [(f.repo_path, f.line, f.crash_site) for f in located[1].frames] == [("shop/pricing.py", 2, True)]
    frames = [frame for context in located for frame in context.frames]
    assert all(LinkedFrame.model_validate(frame.model_dump()) == frame for frame in frames)  # all valid
    assert [code_section(context) for context in located] == [
        code_section(locator().locate(signature)) for signature in signatures
    ]


def test_the_section_keeps_no_frame_alive_once_rendered_and_renders_it_the_same_again(shop):
    """The section's lines are built for each issue, not remembered: a frame the locator let go is not kept
    by the section it was rendered into, and rendering it again gives the same text."""
    locator = CodeLocator(
        shop, CodeMap.of_checkout(shop), InAppRules(), repository="acme/shop", server="https://github.com"
    )
    signature = a_signature(
        "sig_3", representative=ErrorEvent(event_id="e", timestamp=T0, stacktrace=TRACE, message="x")
    )
    context = locator.locate(signature)
    section = code_section(context)
    assert context.frames and code_section(context) == section
    frames = [weakref.ref(frame) for frame in context.frames]
    del context, locator
    gc.collect()
    assert all(frame() is None for frame in frames)
