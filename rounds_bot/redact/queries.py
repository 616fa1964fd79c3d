"""API keys a URL's query carries under a parameter whose name says nothing secret on its own, read by
the format the service documents for the key:

    ?q=London&appid=<32 hex digits>     OpenWeatherMap's API key (its API's `appid` parameter; trufflehog's
                                        `openweather` detector reads the key as 32 lowercase letters and
                                        digits)

An application's id under the same name (`appid=com.acme.app`, WeChat's `appid=wx...`) is no key and stays.
The parameters named after a key (`apikey`, `api_key`, `appkey`, `access_key`, `key`) are pairs
(`pairs.py`, `keys.py`).
"""

from __future__ import annotations

from rounds_bot.redact.rule import Rule, rule

QUERIES: tuple[Rule, ...] = (
    rule("api_key", r"[?&;](?i:appid)=([0-9a-f]{32})(?![0-9A-Za-z_-])", "appid=", group=1),
)
