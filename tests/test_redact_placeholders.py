"""What stands for no value under a secret's name stays: a mask of asterisks of any length, a template's
variable (`${API_KEY}`, `%(token)s`), and MySQL's own `(using password: YES)`, which says only whether a
password was sent."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact

KEPT = (
    "password=********",
    "db_password: ************",
    "api_key: ${API_KEY}",
    "token=%(token)s",
    "senha=${DB_SENHA}",
    "Caused by: java.sql.SQLException: Access denied for user 'app'@'localhost' (using password: YES)",
    "ERROR 1045 (28000): Access denied for user 'root'@'db-1' (using password: NO)",
)


@pytest.mark.parametrize("text", KEPT)
def test_a_value_that_stands_for_none_stays(text: str) -> None:
    assert redact(text) == text


REDACTED = (
    "password=**secret**2024",
    "api_key: $3cr3tK3y2024xyz",
    "token=%41bcd3fGh1jKlmN0p",
    "password: YESsir2024!",
)


@pytest.mark.parametrize("text", REDACTED)
def test_a_value_that_only_holds_a_mask_or_a_sign_is_still_redacted(text: str) -> None:
    assert "[REDACTED:" in redact(text)
