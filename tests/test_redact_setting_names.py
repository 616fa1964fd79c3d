"""Names that hold a secret's word but say a setting or a state of it (`session_state`, `session_backend`,
`token_timeout`), and a Kubernetes reference to another variable (`$(DB_PASSWORD)`), are no secrets; a
password named in Turkish and written in lower case by a system that lower-cases keys (`şi̇fre`) is one."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.event import Redactor
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

KEPT = (
    "session_state=active user=bob",
    "session_backend=memcached timeout=30",
    "session_engine=django.contrib.sessions.backends.db",
    "session_timeout=3600 session_store=redis",
    "password_status=expired attempts=3",
    "token_lifetime=900",
    # where a secret is kept: a file (the `_FILE` variables of Docker's official images), an AWS ARN
    "DB_PASSWORD_FILE=/run/secrets/db_password",
    "MYSQL_ROOT_PASSWORD_FILE=/run/secrets/root",
    "password_file=/etc/app/pw.txt secret_file=/etc/app/secret",
    "signing_key_arn=arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    # a policy's setting: how many old passwords are remembered; a feature switched on or off
    "password_policy=strong password_min_length=12 password_history=5",
    "keycloak: token_exchange=enabled client_auth_method=client_secret_basic",
    "password_expiry_warning=disabled",
)
REDACTED = (
    ("SESSION_SECRET=keyboardcat42", "keyboardcat42"),
    ("sessionid=8f7d6a5c4b3a29181716151413121110", "8f7d6a5c4b3a29181716151413121110"),
    ("password=$ecretP4ss", "$ecretP4ss"),
    # a `$NAME` in telemetry is no reference: the shell expanded those already (this is the password)
    ("password=$UPERSECRET2024", "$UPERSECRET2024"),
    ("PGPASSWORD=%Pa55word%", "%Pa55word%"),
    ("secret=$env:Hunter2x", "$env:Hunter2x"),
    ("şi̇fre: Gizli1234", "Gizli1234"),
    ("ŞİFRE: Gizli1234", "Gizli1234"),
    ("password_hist=Hist0ry2024x", "Hist0ry2024x"),
    ("DB_PASSWORD=K8sS3cretPw file=/run/secrets/x", "K8sS3cretPw"),
)


@pytest.mark.parametrize("text", KEPT)
def test_a_setting_or_a_reference_is_kept(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "secret"), REDACTED)
def test_a_secret_under_such_a_name_is_still_redacted(text: str, secret: str) -> None:
    assert secret not in redact(text)


@pytest.mark.parametrize(("key", "value"), [("session_state", "active"), ("session.backend", "memcached")])
def test_an_attribute_naming_a_setting_is_kept(key: str, value: str) -> None:
    assert Redactor().attributes({key: value}) == {key: value}


def test_every_engine_gives_the_reference_text_for_settings() -> None:
    texts = list(KEPT) + [text for text, _ in REDACTED]
    assert assert_same(_rules("all"), texts) == len(texts)
