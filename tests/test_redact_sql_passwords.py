"""Passwords in SQL statements that create or change a user: MySQL names the authentication plugin before
the password (`IDENTIFIED WITH caching_sha2_password BY '...'`, or its stored hash after `AS`), and Oracle's
`GRANT ... TO user IDENTIFIED BY password` creates the user it grants to (MySQL 5.7's took a quoted one)."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "S3cretPassw0rd"
STATEMENTS = (
    "CREATE USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY '{v}'",
    "ALTER USER 'app'@'localhost' IDENTIFIED WITH caching_sha2_password BY '{v}'",
    "CREATE USER 'app'@'%' IDENTIFIED WITH 'caching_sha2_password' BY '{v}'",
    "CREATE USER 'app'@'%' IDENTIFIED WITH mysql_native_password AS '*{v}'",
    "GRANT CONNECT, RESOURCE TO scott IDENTIFIED BY {v}",
    "GRANT ALL PRIVILEGES ON shop.* TO 'app'@'%' IDENTIFIED BY '{v}'",
    'CREATE USER "Scott" IDENTIFIED BY {v}',
    # MariaDB writes the plugin after VIA, and the password in `USING PASSWORD(...)`
    "ALTER USER 'x'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('{v}')",
    "CREATE USER 'x'@'%' IDENTIFIED WITH unix_socket OR mysql_native_password USING PASSWORD('{v}')",
    # a plugin of another server's: ClickHouse's, TiDB's
    "CREATE USER name1 IDENTIFIED WITH plaintext_password BY '{v}'",
    "ALTER USER app IDENTIFIED WITH 'tidb_sm3_password' BY '{v}'",
)
KEPT = (
    "GRANT SELECT ON orders TO reporting",
    "the user was identified by email",
    "CREATE USER 'app'@'%' IDENTIFIED WITH auth_socket",
)


@pytest.mark.parametrize("statement", STATEMENTS)
def test_a_password_a_statement_gives_a_user_is_redacted(statement: str) -> None:
    text = f'django.db.utils.OperationalError: (1396, "Operation failed for {statement.format(v=SECRET)}")'
    out = redact(text)
    assert SECRET not in out, out
    assert "[REDACTED:sql_password]" in out


@pytest.mark.parametrize("text", KEPT)
def test_a_statement_with_no_password_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_sql_statements() -> None:
    texts = [statement.format(v=SECRET) for statement in STATEMENTS] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
