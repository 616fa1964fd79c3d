"""Where errors come from. A source is a small class with one method, `poll`.

The port and what a poll returns are in `base.py`; `factory.py` builds the source a setting names:
an OTLP/JSON lines file (`otlp_file.py`, reading its lines lean in `otlp_lean.py` or with the
models of `otlp_json.py` in `otlp_events.py`, and building each event in `otlp_build.py`) or SigNoz
(`signoz/`).
"""

from rounds_bot.sources.base import GroupCount, PollResult, SkippedRecord, Source, Window

__all__ = ["GroupCount", "PollResult", "SkippedRecord", "Source", "Window"]
