"""An API key a URL's query carries under the parameter its service names it by: OpenWeatherMap's `appid`
(32 hex digits), and the keys named `appkey`, `app_key`, `access_key`, `apikey`, `api_key`, `key`. An
application's id that is no key (`appid=com.acme.app`) stays."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

KEY = "b6907d289e10d714a6e88b30761fae22"
URLS = (
    "401 Client Error: Unauthorized for url: https://api.openweathermap.org/data/2.5/weather?q=London&appid={v}",
    "GET https://api.openweathermap.org/data/2.5/forecast?appid={v}&units=metric failed",
    "GET https://api.example.com/x?appkey={v}",
    "GET https://api.example.com/x?app_id=abc&app_key={v}",
    "GET http://api.ipstack.com/134.201.250.155?access_key={v}",
    "GET https://api.example.com/x?apikey={v}",
    "GET https://api.example.com/x?q=1&key={v}",
)
KEPT = (
    "GET /apps?page=2&sort=desc&appid=com.acme.app",
    "appid=1234567 not registered",
    "GET https://api.example.com/x?appid=wx1234567890abcdef",
)


@pytest.mark.parametrize("text", URLS)
def test_an_api_key_in_a_query_is_redacted(text: str) -> None:
    out = redact(text.format(v=KEY))
    assert KEY not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_an_application_id_in_a_query_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_them() -> None:
    texts = [text.format(v=KEY) for text in URLS] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
