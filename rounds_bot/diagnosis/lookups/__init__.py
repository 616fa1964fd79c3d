"""The incident look-ups a model may call during a diagnosis, and the back-ends that answer them.

`scope.py` says what the look-ups may touch (the incident's traces, samples, service and window)
and what they answer; `tools.py` offers the three look-ups bounded, scoped and redacted; the
back-ends are the telemetry rounds already holds (`recorded.py`) and SigNoz (`signoz.py`, with the
SQL that counts occurrences in `signoz_occurrences.py` and the row reading in `signoz_rows.py`).
The MCP server that offers the tools to the model is `rounds_bot.diagnosis.mcp_server`.
"""
