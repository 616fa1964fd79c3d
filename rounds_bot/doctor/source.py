"""The doctor's source check: SigNoz reachable (its version, the API paths a round will use by the
version's gates, and the last hour of each stream a round reads, one line each, from
`sources.signoz.probe`; each problem with what to check, and after a refused key that one line
only), or the OTLP file readable."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Protocol

from rounds_bot.doctor.result import Check
from rounds_bot.settings import Settings
from rounds_bot.sources.signoz.probe import DoctorReport, StreamHour, check


class SignozCheck(Protocol):
    """`sources.signoz.probe.check`, or a stand-in for it."""

    def __call__(self, url: str, api_key: str | None, *, now: datetime | None = None) -> DoctorReport: ...


def source_checks(settings: Settings, now: datetime, signoz_check: SignozCheck | None) -> list[Check]:
    spec = settings.effective_source()
    if spec is None:
        return [
            Check(
                area="source",
                status="fix",
                detail="no telemetry source is configured",
                fix="set SIGNOZ_API_URL and SIGNOZ_API_KEY, or ROUNDS_SOURCE=otlp-file:PATH",
            )
        ]
    if spec.startswith("otlp-file:"):
        return [_otlp_file(Path(spec.removeprefix("otlp-file:")))]
    if not settings.signoz_api_url:
        return [
            Check(
                area="source",
                status="fix",
                detail="ROUNDS_SOURCE=signoz without SIGNOZ_API_URL",
                fix="set SIGNOZ_API_URL, e.g. http://signoz.internal:8080",
            )
        ]
    report = (signoz_check or check)(settings.signoz_api_url, settings.signoz_api_key, now=now)
    return _signoz(report)


def _otlp_file(path: Path) -> Check:
    if path.is_file():
        return Check(area="source", status="ok", detail=f"OTLP file {path} ({path.stat().st_size:,} bytes)")
    return Check(
        area="source",
        status="fix",
        detail=f"OTLP file {path} does not exist",
        fix="fix ROUNDS_SOURCE",
    )


def _signoz(report: DoctorReport) -> list[Check]:
    if report.auth_failed:  # one line: every later check would be refused the same way
        return [Check(area="source", status="fix", detail=p.problem, fix=p.fix) for p in report.problems[:1]]
    checks = []
    if report.version is not None:
        detail = f"SigNoz {report.version} at {report.url}"
        checks.append(Check(area="source", status="ok", detail=detail))
    checks += [_stream(stream) for stream in report.streams]
    for problem in report.problems:
        checks.append(Check(area="source", status="fix", detail=problem.problem, fix=problem.fix))
    for note in report.notes:
        checks.append(Check(area="source", status="warn", detail=note))
    if report.version is not None:
        checks += [Check(area="SigNoz API", status="ok", detail=f"uses {path}") for path in report.apis]
        if report.clickhouse_errors:
            errors = f"ClickHouse errors come back as {report.clickhouse_errors}"
            checks.append(Check(area="SigNoz API", status="ok", detail=errors))
    return checks


def _stream(stream: StreamHour) -> Check:
    """One stream's last hour: its count, what failed and what to check, or why it is not read."""
    area = "last hour"
    if stream.problem is not None:
        detail = f"{stream.stream}: {stream.problem.problem}"
        return Check(area=area, status="fix", detail=detail, fix=stream.problem.fix)
    if stream.not_read is not None:
        return Check(area=area, status="off", detail=f"{stream.stream}: not read, {stream.not_read}")
    what = {
        "exceptions": "exception group",
        "error spans": "group of error spans whose exception SigNoz did not index",
        "error logs": "group of logs of severity ERROR or worse",
    }.get(stream.stream, "group")
    occurrences, groups = stream.occurrences or 0, stream.groups or 0
    what = what if groups == 1 else what.replace("group", "groups", 1)
    detail = f"{stream.stream}: {occurrences} occurrence{'' if occurrences == 1 else 's'} in {groups} {what}"
    return Check(area=area, status="ok", detail=detail)
