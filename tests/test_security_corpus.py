"""The proof: the public corpus planted in every field of real telemetry, through real rounds, into every
output.

Secrets: none of the planted values appears in the dry-run drafts, stdout, stderr, the job summary, the log,
`rounds db status`, the database or its WAL, the fake GitHub's titles, bodies, labels and comments, the
prompts a recording model received, or the report. Hostile text: no payload, planted in any field or given as
the model's answer, renders anything active on GitHub or is obeyed as a command.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from fake_github.fixtures import running_fake
from fake_github.server import FakeGitHub
from security_corpus import KEPT, TOKEN_FAMILIES, assignment_samples, corpus, injections, named_samples
from security_harness import (
    PLACES,
    RecordingModel,
    active,
    benign_answer,
    dry_run_outputs,
    github_outputs,
    judge,
    leaks,
    now,
    otlp_lines,
    plant_secrets,
    secret_file,
)

from rounds_bot.redact import redact

pytestmark = pytest.mark.security


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


def test_the_corpus_is_hundreds_of_values_across_every_family_and_place():
    planted = corpus()
    placed = plant_secrets(planted)
    assert len(planted) >= 300
    assert {item.family for item in planted} >= {family for family, _ in TOKEN_FAMILIES}
    assert {place for _, place in placed} >= set(PLACES)
    assert len({item.category for item in planted}) >= 12


def test_no_planted_secret_reaches_any_output_of_a_dry_run(clean_env, tmp_path, monkeypatch):
    planted = corpus()
    telemetry = secret_file(tmp_path / "telemetry.jsonl", plant_secrets(planted), now())
    outputs = dry_run_outputs(tmp_path, telemetry, monkeypatch)
    assert any(name.startswith("draft") for name in outputs.texts)
    leaked = leaks(outputs, planted)
    assert leaked == [], "\n".join(f"{item.family}: {item.secret!r} in {where}" for item, where in leaked)


@pytest.mark.github_spec
def test_no_planted_secret_reaches_github_the_prompts_or_the_database(fake_github, tmp_path):
    planted = corpus()
    telemetry = secret_file(tmp_path / "telemetry.jsonl", plant_secrets(planted), now())
    model = RecordingModel(benign_answer())
    outputs = github_outputs(fake_github, tmp_path, telemetry, model)
    assert model.prompts and fake_github.issues()
    leaked = leaks(outputs, planted)
    assert leaked == [], "\n".join(f"{item.family}: {item.secret!r} in {where}" for item, where in leaked)


# How a message often carries another text: quoted, bracketed, as a JSON document (a log line that is JSON,
# a request body), nested, or at the end of a sentence.
WRAPPINGS = (
    "'{}'",
    '"{}"',
    "({})",
    "[{}]",
    "<{}>",
    "`{}`",
    "{},",
    "{}.",
    "{};",
    "\t{}\n",
    '{{"msg": "{}"}}',
    '{{"error": {{"detail": "{}"}}}}',
    "msg='{}'",
    '[{{"body": "{}"}}]',
)


@pytest.mark.parametrize("wrapping", WRAPPINGS)
def test_a_secret_wrapped_in_quotes_brackets_or_json_is_still_redacted(wrapping):
    # found by this test: a pair whose quoted value held the secret's own pair (`"msg": "password=..."`)
    # hid it, so nothing inside a JSON string value was read as a pair
    # (a value whose place is an attribute's name is judged under that name, not in free text)
    leaked = [
        item.carrier
        for item in corpus()
        if item.kind == "text"
        and not item.place.startswith("span.attribute")
        and item.secret in redact(wrapping.format(item.carrier))
    ]
    assert leaked == []


def test_a_secret_in_every_shape_gitleaks_samples_its_rules_in_is_redacted():
    # found by this test: Go and Kotlin typed declarations, PHP `.=`/`??=`, make's `::=`, `:::=` and `+=`,
    # a property set in a call, XML elements and attributes, JSON name/value pairs, YAML blocks, CSV rows
    # and escaped quotes all kept the secret (2,655 of 6,549 samples over 177 identifiers)
    leaked = [text for text, secret in assignment_samples() if secret in redact(text)]
    assert leaked == []


def test_a_credential_under_a_services_key_access_key_or_pat_is_redacted():
    # found by this test: `STRIPE_KEY=...`, `ADAFRUIT_IO_KEY=...` and `gitlab_pat=...` kept the credential
    leaked = [text for text, secret in named_samples() if secret in redact(text)]
    assert leaked == []


def test_ids_times_and_words_that_are_not_secrets_are_kept():
    for text in KEPT:
        assert redact(text) == text


def _hostile_file(tmp_path, payloads):
    items = [
        (PLACES[(n + shift) % len(PLACES)], payload, "", None)
        for n, payload in enumerate(payloads)
        for shift in (0, 5, 9)
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text(otlp_lines(items, now()), encoding="utf-8")
    return path, len(items)


def test_hostile_text_in_every_field_renders_nothing_active_in_the_dry_run(clean_env, tmp_path, monkeypatch):
    telemetry, _ = _hostile_file(tmp_path, injections())
    outputs = dry_run_outputs(tmp_path, telemetry, monkeypatch)
    live = {
        name: found
        for name, text in outputs.texts.items()
        if not name.startswith(("database", "db status")) and (found := active(text))
    }
    assert live == {}
    # `rounds db status` is terminal text, not Markdown: it must carry no control or bidi character
    assert "control or bidi" not in active(outputs.texts["db status"])


@pytest.mark.github_spec
def test_hostile_text_in_every_field_and_in_the_models_answer_renders_nothing_active_on_github(
    fake_github, tmp_path
):
    payloads = injections()
    telemetry, _ = _hostile_file(tmp_path, payloads)
    joined = " ".join(payloads)
    model = RecordingModel(
        benign_answer(
            root_cause=joined,
            suggested_fix="\n".join(payloads),
            missing_observability=payloads,
            evidence=[{"kind": "log", "log_line": payload, "explanation": payload} for payload in payloads],
            suggested_error_code=payloads[0],
        )
    )
    outputs = github_outputs(fake_github, tmp_path, telemetry, model)
    assert fake_github.issues()
    live = {
        name: found
        for name, text in outputs.texts.items()
        if not name.startswith(("prompt", "github database")) and (found := judge(name, text))
    }
    assert live == {}
    kinds = Counter(label.split(":")[0] for issue in fake_github.issues() for label in issue.labels)
    assert kinds["service"] >= 1
    for issue in fake_github.issues():
        assert all(label.isprintable() and "," not in label and len(label) <= 50 for label in issue.labels)
