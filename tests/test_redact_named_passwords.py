"""Two ways code names a password that `password` alone does not cover: the short `pw` (`pw='...'`,
`DB_PW=...`), and Oracle's `IDENTIFIED BY`, which quotes a password only when it must
(`CREATE USER app IDENTIFIED BY s3cret;`)."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "s3cr3tP4ssw0rd2024"
REDACTED = (
    "DBConfig(host='db', port=5432, user='app', pw='{v}')",
    "DB_PW={v}",
    '{{"smtp_pw": "{v}"}}',
    "ORA-01935 while running: CREATE USER app IDENTIFIED BY {v};",
    "ALTER USER app IDENTIFIED BY {v} ACCOUNT UNLOCK",
    "alter user system identified by {v}",
    # the old password a user changing their own gives after REPLACE, bare or quoted
    "ALTER USER app IDENTIFIED BY N3wPass2025x REPLACE {v}",
    'ALTER USER app IDENTIFIED BY "N3w#Pass" REPLACE "{v}#x"',
    "ALTER USER 'bob'@'%' IDENTIFIED BY 'N3wPass' REPLACE '{v}'",
)


@pytest.mark.parametrize("shape", REDACTED)
def test_the_password_is_redacted(shape: str) -> None:
    out = redact(shape.format(v=SECRET))
    assert SECRET not in out, out


KEPT = (
    "pw_count=3",
    "ALTER USER app IDENTIFIED BY VALUES",
    "CREATE USER app IDENTIFIED EXTERNALLY",
    "users identified by email",
    # prose: no CREATE or ALTER statement before it
    "the user was identified by email",
    "Connection from user 'bob' identified by key fingerprint SHA256:abcd",
)


@pytest.mark.parametrize("text", KEPT)
def test_what_names_no_password_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text() -> None:
    texts = [shape.format(v=SECRET) for shape in REDACTED] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
