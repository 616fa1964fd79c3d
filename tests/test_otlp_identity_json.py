"""A log record's id hashes its attributes spelled as `json.dumps(attributes, sort_keys=True, default=str)`;
the quicker spelling for the usual attributes (`otlp_build.identity_json`) is exactly that one."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from rounds_bot.sources.otlp_build import identity_json

VALUES = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(max_codepoint=0x7F)),  # ASCII, DEL and control characters among it
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
)
KEYS = st.one_of(st.text(), st.text(alphabet=st.characters(max_codepoint=0x7F)))


@given(st.dictionaries(KEYS, VALUES, max_size=8))
def test_the_identity_spelling_is_jsons(attributes: dict[str, str | int | float | bool]) -> None:
    assert identity_json(attributes) == json.dumps(attributes, sort_keys=True, default=str)


def test_a_stack_trace_and_the_usual_attributes_are_spelled_as_json_spells_them() -> None:
    attributes: dict[str, str | int | float | bool] = {
        "exception.stacktrace": 'Traceback (most recent call last):\n  File "a.py", line 1\n\tx = "\\"\x7f',
        "http.status_code": 500,
        "retry": True,
        "error.code": "E-1",
        "ratio": 0.5,
        "name": "caf\u00e9",
    }
    assert identity_json(attributes) == json.dumps(attributes, sort_keys=True, default=str)
    del attributes["ratio"], attributes["name"]
    attributes["exception.stacktrace"] = str(attributes["exception.stacktrace"]).replace("\x7f", "")
    assert identity_json(attributes) == json.dumps(attributes, sort_keys=True, default=str)
