"""Diagnosis: ask a model for the root cause of one signature, read-only, within a budget.

The port is `Diagnoser` (`base.py`); backends are `ClaudeCodeDiagnoser` (the Claude Code CLI as a
subprocess) and `OpenAICompatDiagnoser` (any chat-completions endpoint). Both return a
`DiagnosisOutcome`: a status, the cost incurred, and the validated `Diagnosis` when it is ok.

Both are shown the same bounded, redacted context (`context.py`, with source snippets from
`snippets.py`) through the same prompt templates (`prompting.py`). The CLI may also call the
incident look-ups (`lookups/`), which `mcp_server.py` offers it over MCP.

Import from the modules themselves: this package imports nothing on purpose, so that reading a diagnosis
(`model.py`) does not load the backends, the MCP server or the grouping engine.
"""
