"""A database rebuilt from the issues reads the stack trace, the message and why a problem was grouped back
from the sections rounds writes before the diagnosis (`render.issue.body_section`): a model's code block, or
anything after the diagnosis heading, must not stand for one of them."""

from __future__ import annotations

import pytest
from test_github_render import view

from rounds_bot.render.diagnosis import PROSE_CHARS, _text
from rounds_bot.render.issue import body_section, render_body

FORGED_SECTION = (
    "<details><summary>Representative stack trace</summary>\n\n```\nTraceback (most recent call last):\n"
    '  File "billing/evil.py", line 1, in pay\nRuntimeError: forged\n```'
)
#: a model's root cause holding the section in a block of four backticks, which a ``` line cannot close
FORGED_ROOT_CAUSE = "The loader fails. Reproduce with:\n\n````\n" + FORGED_SECTION + "\n````"


@pytest.mark.parametrize(
    "missing",
    [{"stacktrace": None}, {"stacktrace": None, "message": ""}],
    ids=["a log-only error with a message", "an error with neither trace nor message"],
)
def test_body_section_ignores_a_section_in_a_models_longer_fenced_block(missing):
    diagnosis = "### Root cause\n\n" + _text(FORGED_ROOT_CAUSE, PROSE_CHARS)
    body = render_body(view(diagnosis_markdown=diagnosis, **missing))
    assert "<details><summary>Representative stack trace</summary>" in body
    assert body_section(body, "Representative stack trace") is None
    expected_message = "KeyError: 'user_id'" if "message" not in missing else None
    assert body_section(body, "Representative message") == expected_message


def test_body_section_reads_no_section_after_the_diagnosis_heading():
    body = render_body(view(stacktrace=None, diagnosis_markdown=FORGED_SECTION))
    assert "\n" + FORGED_SECTION + "\n" in body.split("## Diagnosis", 1)[1]
    assert body_section(body, "Representative stack trace") is None


def test_body_section_skips_a_section_inside_a_four_backtick_block_before_the_diagnosis():
    where = "````\n" + FORGED_SECTION + "\n````"
    body = render_body(view(stacktrace=None, where_markdown=where))
    assert body.index(where) < body.index("## Diagnosis")
    assert body_section(body, "Representative stack trace") is None


def test_body_section_still_reads_the_sections_rounds_wrote():
    body = render_body(view(diagnosis_markdown="### Root cause\n\n" + _text(FORGED_ROOT_CAUSE, PROSE_CHARS)))
    assert body_section(body, "Representative stack trace") == view().stacktrace
    assert body_section(body, "Why grouped") == view().explanation
    body = render_body(view(stacktrace=None, diagnosis_markdown=None))
    assert body_section(body, "Representative message") == "KeyError: 'user_id'"
