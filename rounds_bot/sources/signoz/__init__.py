"""SigNoz as a source of errors: an httpx client, the source and a doctor check.

SignozSource(url, api_key, ...)   poll(window, known_group_ids) -> PollResult
check(url, api_key, ...)          -> DoctorReport, for `rounds doctor`

An emulator of SigNoz's HTTP API, for tests and trials, lives with the tests (`tests/signoz_emulator`).
"""

from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.probe import DoctorReport, check
from rounds_bot.sources.signoz.source import SignozSource

__all__ = ["DoctorReport", "SignozClient", "SignozHTTPError", "SignozSource", "check"]
