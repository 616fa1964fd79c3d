"""rounds' own secrets removed from text that code it did not write printed, in every cheap encoding."""

from __future__ import annotations

import base64
import random
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from rounds_bot.redact.known import MARK, KnownSecrets

TOKEN = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
KNOWN = KnownSecrets.from_environment({"GITHUB_TOKEN": TOKEN, "ANTHROPIC_API_KEY": KEY, "PATH": "/usr/bin"})


def test_plain_hex_and_percent_encoded_copies_are_removed():
    text = f"env: {TOKEN} / {TOKEN.encode().hex()} / {TOKEN.encode().hex().upper()} / {quote(KEY, safe='')}"
    scrubbed = KNOWN.scrub(text)
    assert TOKEN not in scrubbed and TOKEN.encode().hex() not in scrubbed.lower()
    assert scrubbed.count(MARK) == 4


@given(prefix=st.binary(max_size=40), suffix=st.binary(max_size=40), urlsafe=st.booleans())
def test_a_base64_copy_inside_any_longer_blob_is_removed(prefix, suffix, urlsafe):
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(prefix + TOKEN.encode() + suffix).decode()
    scrubbed = KNOWN.scrub(f"leaked: {blob}")
    assert MARK in scrubbed
    # what is left cannot give the token back: no 12-character run of its encoding survives
    for offset in range(3):
        core = base64.b64encode(bytes(offset) + TOKEN.encode()).decode()[4:16]
        assert core not in scrubbed


def test_other_text_and_other_variables_are_left_alone():
    text = "tests passed: 12 in 0.4 s; /usr/bin on PATH; " + "".join(random.choices("abcdef0123456789", k=64))
    assert KNOWN.scrub(text) == text
    assert KnownSecrets.from_environment({"GITHUB_TOKEN": "short"}).forms == ()
