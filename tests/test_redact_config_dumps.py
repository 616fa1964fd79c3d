"""Secrets as well-known tools' configurations give them: a Kubernetes container's environment entry (the
variable's name on one line, `value:` on the next, quoted or not) and wpa_supplicant's pre-shared key
(`psk="..."`). The same entries with a reference instead of a value (`valueFrom:`, a variable) stay."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "K8sEnvPw2024x"
REDACTED = (
    '- name: DB_PASSWORD\n  value: "{v}"',
    "        - name: DB_PASSWORD\n          value: {v}\n        - name: DB_HOST\n          value: db",
    '{{"env": [{{"name": "API_TOKEN", "value": "{v}"}}]}}',
    "{{name: SMTP_PASSWORD, value: {v}}}",
    'network={{\n    ssid="office"\n    psk="{v}"\n}}',
    "psk={v}",
)
KEPT = (
    "- name: DB_HOST\n  value: db.internal",
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password",
    "- name: DB_PASSWORD\n  value: $(DB_PASSWORD_FROM_VAULT)",
    "- name: LOG_LEVEL\n  value: debug",
    'network={\n    ssid="office"\n    key_mgmt=WPA-PSK\n}',
)


@pytest.mark.parametrize("shape", REDACTED)
def test_the_secret_a_configuration_gives_is_redacted(shape: str) -> None:
    out = redact(shape.format(v=SECRET))
    assert SECRET not in out, out


@pytest.mark.parametrize("text", KEPT)
def test_an_entry_with_no_secret_value_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_configurations() -> None:
    texts = [shape.format(v=SECRET) for shape in REDACTED] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
