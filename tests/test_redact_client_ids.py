"""Discord's and Asana's client ids are all digits: alone they are ids like any other (a Discord snowflake, an
Asana gid) and stay; after their names, as gitleaks' semi-generic rules read them, they are redacted.

gitleaks' `discord-client-id` is the service's name, a client credential's words and 18 digits (entropy 2 or
more: `discord=000000000000000000` is its own false positive); `asana-client-id` the same with 16 digits. Both
are written here in the shapes gitleaks generates its samples in (`=`, `:`, `:=`, `=>`, quoted, JSON, YAML)
and in an attribute's key.
"""

from __future__ import annotations

import pytest

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, redact_poll, redact_with_report
from rounds_bot.redact.text import _rules
from rounds_bot.sources.base import PollResult
from tests.redact_reference import reference_redact
from tests.test_redact_engine import assert_same

DISCORD_ID = "923846571029384756"  # 18 digits
ASANA_ID = "1204958837261534"  # 16 digits
#: (name, value) as a service's configuration writes them
NAMED = (
    ("DISCORD_CLIENT_ID", DISCORD_ID),
    ("discord_client_id", DISCORD_ID),
    ("discordClientId", DISCORD_ID),
    ("discord.client.id", DISCORD_ID),
    ("DISCORD_APP_ID", DISCORD_ID),
    ("ASANA_CLIENT_ID", ASANA_ID),
    ("asana_client_id", ASANA_ID),
    ("asanaClientId", ASANA_ID),
    ("ASANA_CLIENT", ASANA_ID),
)
SHAPES = (
    "{name}={value}",
    "{name}: {value}",
    "{name} := {value}",
    '"{name}" => "{value}"',
    "{name} = '{value}'",
    '{{"{name}": "{value}", "retry": 3}}',
    "config:\n  {name}: {value}\n  region: eu",
)
#: the same digits without a credential's name: ids of users, channels, guilds, messages, tasks
KEPT = (
    f"user {DISCORD_ID} joined guild 81384788765712384",
    f"message {DISCORD_ID} deleted in channel 175928847299117063",
    f"discord_guild_id={DISCORD_ID}",
    f"discord_channel={DISCORD_ID} muted",
    f"https://discord.com/channels/81384788765712384/{DISCORD_ID}",
    f"task {ASANA_ID} moved to section 1204958837261999",
    f"https://app.asana.com/0/{ASANA_ID}/1204958837261999",
    f"asana_task_id={ASANA_ID}",
    f"asana_project: {ASANA_ID}",
    "DISCORD_CLIENT_ID=000000000000000000",  # gitleaks' own false positive: too little entropy
)


@pytest.mark.parametrize(("name", "value"), NAMED)
def test_a_client_id_after_its_name_is_redacted(name: str, value: str) -> None:
    for shape in SHAPES:
        text = shape.format(name=name, value=value)
        report = redact_with_report(text)
        assert value not in report.text, text
        assert report.total == 1, text


@pytest.mark.parametrize("text", KEPT)
def test_all_digit_ids_without_a_credentials_name_stay(text: str) -> None:
    assert redact(text) == text


def test_a_client_id_under_its_name_as_an_attributes_key_is_redacted_and_an_id_kept() -> None:
    event = ErrorEvent(
        event_id="e1",
        timestamp="2026-11-28T12:00:00Z",
        service="bot",
        message=f"interaction {DISCORD_ID} failed",
        attributes={
            "discord.client_id": DISCORD_ID,
            "asana.client_id": ASANA_ID,
            "discord.user_id": DISCORD_ID,
        },
    )
    seen = redact_poll(Redactor(), PollResult(events=[event])).events[0]
    assert seen.message == f"interaction {DISCORD_ID} failed"
    assert seen.attributes["discord.user_id"] == DISCORD_ID
    assert DISCORD_ID not in str(seen.attributes["discord.client_id"])
    assert ASANA_ID not in str(seen.attributes["asana.client_id"])


def test_the_engines_redact_client_ids_as_the_reference_does() -> None:
    rules = _rules("all")
    texts = [shape.format(name=name, value=value) for name, value in NAMED for shape in SHAPES] + list(KEPT)
    assert assert_same(rules, texts) == len(texts)
    for text in texts:
        assert redact_with_report(text) == reference_redact(rules, text)
