"""Diagnosis: ask a model for the root cause of one signature, read-only, within a budget.

The port is `Diagnoser` (`base.py`); backends are `ClaudeCodeDiagnoser` (the Claude Code CLI as a
subprocess) and `OpenAICompatDiagnoser` (any chat-completions endpoint). Both return a
`DiagnosisOutcome`: a status, the cost incurred, and the validated `Diagnosis` when it is ok.

Both are shown the same bounded, redacted context (`context.py`, with source snippets from
`snippets.py`) through the same prompt templates (`prompting.py`). The CLI may also call the
incident look-ups (`lookups/`), which `mcp_server.py` offers it over MCP.
"""

from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.diagnosis.budget import BudgetCaps, BudgetDecision, decide, diagnosis_cache_key
from rounds_bot.diagnosis.claude_code import ClaudeCodeDiagnoser
from rounds_bot.diagnosis.model import (
    Diagnosis,
    DiagnosisOutcome,
    DiagnosisRequest,
    Evidence,
    EvidenceCheck,
    LogLine,
    OccurrenceStats,
    RelatedSignature,
)
from rounds_bot.diagnosis.openai_compat import OpenAICompatDiagnoser
from rounds_bot.diagnosis.render import render_diagnosis

__all__ = [
    "BudgetCaps",
    "BudgetDecision",
    "ClaudeCodeDiagnoser",
    "Diagnoser",
    "Diagnosis",
    "DiagnosisOutcome",
    "DiagnosisRequest",
    "Evidence",
    "EvidenceCheck",
    "LogLine",
    "OccurrenceStats",
    "OpenAICompatDiagnoser",
    "RelatedSignature",
    "decide",
    "diagnosis_cache_key",
    "render_diagnosis",
]
