"""Fuzzing the parsers, the normaliser, the sanitiser, redaction, the escaping rule and the command parser:
no input crashes them, none takes longer than its time bound, and none makes them let anything through."""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from security_corpus import corpus
from security_harness import active

from rounds_bot.commands.grammar import command_lines, parse_comment
from rounds_bot.errors import SourceFormatError
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, sanitize
from rounds_bot.render.markdown import escape
from rounds_bot.sources.otlp_json import parse_export_line

pytestmark = pytest.mark.security

#: The time bound per input; hypothesis fails an example that takes longer.
BOUND = timedelta(seconds=5)
EXAMPLES = int(os.environ.get("ROUNDS_FUZZ_EXAMPLES", "150"))
# CI replays the same examples every run (a gate that passes or fails for the code, not the draw); run
# locally with more examples, e.g. ROUNDS_FUZZ_EXAMPLES=5000, to search further.
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=BOUND,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=os.environ.get("CI", "").lower() == "true",
)
MARKDOWN = st.text(alphabet="<>[]()!@#`*_~$|\\/:.-=&; \n\tabcpwnhttps70123\u202e\u200b", max_size=300)
SECRETS = [item for item in corpus() if item.kind == "text"]


@FUZZ
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000)))
def test_the_otlp_parser_answers_every_input_or_says_what_is_wrong(line):
    with contextlib.suppress(SourceFormatError):
        parse_export_line(line)


@FUZZ
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=40),
        lambda c: (
            st.lists(c)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "resourceSpans",
                        "resourceLogs",
                        "scopeSpans",
                        "spans",
                        "attributes",
                        "key",
                        "value",
                        "traceId",
                    ]
                ),
                c,
            )
        ),
        max_leaves=30,
    )
)
def test_the_otlp_parser_survives_every_json_shape(document):
    import json

    with contextlib.suppress(SourceFormatError):
        parse_export_line(json.dumps(document))


@FUZZ
@given(st.text(max_size=3000))
def test_the_normaliser_takes_any_text(text):
    assert isinstance(normalize_uncached(text), str)


@FUZZ
@given(st.text(max_size=3000))
def test_sanitised_text_has_nothing_hidden(text):
    assert not any(ch in sanitize(text) for ch in "\x00\x1b\u202e\u2066\u200b\ufeff")


@FUZZ
@given(st.text(max_size=300), st.sampled_from(SECRETS), st.text(max_size=300))
def test_a_secret_in_any_surrounding_text_is_redacted(before, secret, after):
    text = f"{before} {secret.carrier} {after}"
    assert secret.secret not in redact(text)


@FUZZ
@given(
    st.text(max_size=200),
    st.text(max_size=2000),
    st.dictionaries(st.text(max_size=30), st.text(max_size=60) | st.integers(), max_size=10),
)
def test_the_boundary_takes_any_event(name, message, attributes):
    event = ErrorEvent(
        event_id=name or "e",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        service=name,
        message=message,
        attributes=attributes,
    )
    redacted = Redactor().event(event)
    assert "\n" not in redacted.service and redacted == Redactor().event(event)


@FUZZ
@given(MARKDOWN)
def test_escaped_text_renders_nothing_active(text):
    assert active(str(escape(text))) == []


@FUZZ
@given(st.text(max_size=2000))
def test_the_command_parser_takes_any_comment(body):
    parse_comment(body)


@FUZZ
@given(st.text(alphabet=st.characters(blacklist_characters="`"), max_size=500))
def test_nothing_inside_a_fence_is_a_command(text):
    assert command_lines("```\n" + text.replace("/rounds", "\n/rounds") + "\n```") == []
