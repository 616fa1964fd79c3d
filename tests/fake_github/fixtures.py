"""The fake GitHub as a test fixture: a module that needs it declares

    @pytest.fixture
    def fake_github() -> Iterator[FakeGitHub]:
        yield from running_fake()

Tests using the fake are marked `github_spec`: they skip when GitHub's REST description is not in the cache
folder, except in CI (`CI` set), where a missing description is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .server import FakeGitHub
from .spec import DescriptionMissing, description_path

TOKEN = "ghs_fake_token_for_tests"
REPOSITORY = "octo/app"
# What `permissions:` a rounds workflow job grants its GITHUB_TOKEN.
BOT_PERMISSIONS = {"issues": "write", "contents": "read", "actions": "read", "pull_requests": "write"}


def repository_env(fake: FakeGitHub, folder: Path) -> dict[str, str]:
    """The settings that point rounds at `REPOSITORY` on the fake, with its database in `folder`."""
    return {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": REPOSITORY,
        "ROUNDS_GITHUB_API_URL": fake.base_url,
        "SIGNATURES_DB_PATH": str(folder / "rounds.db"),
    }


def require_description() -> None:
    try:
        found = description_path()
    except DescriptionMissing as exc:
        pytest.fail(str(exc))
    if found is None:
        message = (
            "GitHub's REST description is not in .ci/cache/ "
            "(fetch it with `python -m tests.fake_github.spec`, or let .ci/run do it)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def running_fake() -> Iterator[FakeGitHub]:
    """A running fake GitHub with repository octo/app and a token with the bot's permissions.

    Any request or response that violates GitHub's REST description fails the test.
    """
    require_description()
    with FakeGitHub(repository=REPOSITORY) as fake:
        fake.add_token(TOKEN, **BOT_PERMISSIONS)
        yield fake
    assert fake.violations == [], "exchanges that violate GitHub's REST description:\n" + "\n".join(
        fake.violations
    )
