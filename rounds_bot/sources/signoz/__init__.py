"""SigNoz as a source of errors: an httpx client, the source, a doctor check and an emulator.

SignozSource(url, api_key, ...)   poll(window, known_group_ids) -> PollResult
check(url, api_key, ...)          -> DoctorReport, for `rounds doctor`
SignozEmulator(dataset, ...)      SigNoz's HTTP API on 127.0.0.1, for tests and trials
"""

from rounds_bot.sources.signoz.client import SignozClient, SignozHTTPError
from rounds_bot.sources.signoz.probe import DoctorReport, check
from rounds_bot.sources.signoz.source import SignozSource

__all__ = ["DoctorReport", "SignozClient", "SignozHTTPError", "SignozSource", "check"]
