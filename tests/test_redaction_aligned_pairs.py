"""A secret's name and its value with the separator aligned in a column, as configuration files and dumps
write them: MySQL's option files (`password        = ...`), a `.properties` file, `Properties.list()`,
an INI section, a YAML map lined up by hand. The value after a wide gap is redacted as one after a narrow
one; prose after a wide gap (`token:      expired`) stays, as it does after a narrow one."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "Zq9vK2mLp8Rw"
ALIGNED = (
    "[client]\nuser            = root\npasswd          = {v}\n",
    "password                = {v}",
    "db.password      : {v}",
    "Password:        {v}",
    "spring.datasource.password\t\t\t\t= {v}",
    "  api_key:          '{v}'",
    "AWS_SECRET_ACCESS_KEY =          {v}",
)
KEPT = (
    "token:            expired",
    "password:         required",
    "Password:         ********",
    "password_policy  = strict",
    "secret_name      = db-credentials",
)


@pytest.mark.parametrize("shape", ALIGNED)
def test_a_value_aligned_in_a_column_after_its_name_is_redacted(shape: str) -> None:
    out = redact(shape.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_prose_or_a_placeholder_aligned_after_a_name_stays(text: str) -> None:
    assert redact(text) == text


def test_a_long_run_of_blanks_after_names_is_read_in_linear_time() -> None:
    # were the blanks before and after the separator read two ways, each name would try every split of its
    # gap: about 100 KB of names with no separator after any gap, none of them a pair
    text = ("password" + " " * 39 + "x ") * 2_500
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_aligned_pairs() -> None:
    texts = [shape.format(v=SECRET) for shape in ALIGNED] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
