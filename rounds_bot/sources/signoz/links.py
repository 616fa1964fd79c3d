"""Where SigNoz's UI shows what an event stands for: the trace with its span, the log line, the
exception group. Routes as SigNoz's frontend names them (`frontend/src/constants/routes.ts`: `/trace`,
`/logs/logs-explorer`, `/error-detail`); a log line is opened as its "copy link" builds it
(`frontend/src/hooks/logs/useCopyLogLink.ts`: `activeLogId` in quotes, `startTime`/`endTime`).

The UI is at the API's address unless SIGNOZ_UI_URL says otherwise (an API behind its own host).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode

from rounds_bot.sources.signoz.times import NS_PER_S

# the log explorer opens a time range around the line
_AROUND_NS = 5 * 60 * NS_PER_S


@dataclass(frozen=True)
class UiLinks:
    base_url: str

    def trace(self, trace_id: str, span_id: str | None) -> str:
        url = f"{self.base_url}/trace/{quote(trace_id, safe='')}"
        return f"{url}?{urlencode({'spanId': span_id})}" if span_id else url

    def log(self, log_id: str, timestamp_ns: int) -> str:
        query = urlencode(
            {
                "activeLogId": f'"{log_id}"',
                "startTime": str(timestamp_ns - _AROUND_NS),
                "endTime": str(timestamp_ns + _AROUND_NS),
            }
        )
        return f"{self.base_url}/logs/logs-explorer?{query}"

    def exception(self, group_id: str, timestamp_ns: int) -> str:
        query = urlencode({"groupId": group_id, "timestamp": str(timestamp_ns)})
        return f"{self.base_url}/error-detail?{query}"
