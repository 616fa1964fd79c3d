"""Labels: one severity and one classification at a time, kept as humans left the rest."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from fake_github import FakeGitHub
from fake_github.fixtures import running_fake
from fake_github.rounds import START, error_event, round_against

from rounds_bot.github.labels import without_replaced

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


def test_a_new_value_of_an_exclusive_family_replaces_the_old_one():
    current = {"rounds", "severity:low", "classification:client-misuse", "team:payments"}
    wanted = {"rounds", "severity:medium"}
    assert without_replaced(current, wanted) == {"rounds", "classification:client-misuse", "team:payments"}


def test_severity_grows_with_the_count_and_the_old_label_goes(tmp_path, fake_github):
    round_against(fake_github, tmp_path, [error_event(0)], minutes=5)
    issue = fake_github.repo.issues[1]
    assert "severity:low" in issue.labels
    issue.labels.append("team:payments")  # a human's label
    later = START + timedelta(minutes=10)
    burst = [error_event(0, at=later, serial=s) for s in range(150)]
    round_against(fake_github, tmp_path, burst, minutes=20)
    labels = fake_github.repo.issues[1].labels
    assert "severity:medium" in labels and "severity:low" not in labels
    assert "team:payments" in labels
