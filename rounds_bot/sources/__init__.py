"""Where errors come from. A source is a small class with one method, `poll`.

The port and what a poll returns are in `base.py`; `factory.py` builds the source a setting names:
an OTLP/JSON lines file (`otlp_file.py`, building its events in `otlp_events.py`, over the wire format of
`otlp_json.py`) or SigNoz (`signoz/`).
"""

from rounds_bot.sources.base import GroupCount, PollResult, SkippedRecord, Source, Window

__all__ = ["GroupCount", "PollResult", "SkippedRecord", "Source", "Window"]
