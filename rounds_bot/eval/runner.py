"""Each case through the real diagnosis path: the request the round builds, the diagnoser (or a recording of
what it answered), and the same validation and checks (`claude_result.outcome_from_result`).

Three sources of answers, each one row of the table:
- the crash-site baseline (`baseline.py`), computed on every run;
- recordings (`recordings.py`), replayed: the answer is validated and checked again now, so a change to
  the schema or the checks shows at once; a recording made under another prompt is reported stale;
- a live diagnoser, when one is given: only for cases whose sources are there (the model reads them),
  within a cost cap; each answer is recorded in the output folder for later replays.

Nothing here raises for a bad case, recording or run: each becomes a row's counted problem. Everything
written goes under the output folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field

from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.diagnosis.claude_code import MCP_SERVER_NAME, READ_ONLY_TOOLS
from rounds_bot.diagnosis.claude_result import outcome_from_result
from rounds_bot.diagnosis.context import build_context
from rounds_bot.diagnosis.mcp_server import tool_names
from rounds_bot.diagnosis.model import DiagnosisOutcome, DiagnosisRequest, diagnosis_json_schema
from rounds_bot.diagnosis.prompting import PromptLibrary
from rounds_bot.errors import RoundsError
from rounds_bot.eval.baseline import ORIGIN as BASELINE
from rounds_bot.eval.baseline import baseline_answer
from rounds_bot.eval.cases import Case, LoadedCase, with_stored_sources
from rounds_bot.eval.fixer import propose_fix
from rounds_bot.eval.fixes import FixCheck, check_fix, runnable
from rounds_bot.eval.recordings import LoadedRecording, Recording, RecordingOrigin, save_recording
from rounds_bot.eval.request import case_request
from rounds_bot.eval.scoring import CaseScore, score
from rounds_bot.fixing.editor import FixEditor
from rounds_bot.models import Frozen

EMPTY_CHECKOUT = "empty-checkout"
SOURCES = "sources"
FIXES = "fixes"
PROPOSALS = "proposals"


class CaseRun(Frozen):
    """One case under one row: its score, or the problem that kept it from being scored."""

    case_id: str
    kind: str = "unknown"
    dataset: str = "unknown"
    label: str
    origin: str
    score: CaseScore | None = None
    problem: str | None = None
    located: bool = Field(default=False, description="the case's truth says where the fault is")
    sources_missing: bool = False
    stale: bool = False
    turns: int = 0
    cost_usd: float = 0.0
    fix: FixCheck | None = Field(default=None, description="None when no fix was asked for")


def prompt_fingerprint(case: Case, empty_checkout: Path) -> str:
    """A hash of the prompt a case gets, sources aside (the templates, standards, answer schema, tools and
    the case's telemetry as the context shows it): what a recording must match to be current."""
    request = case_request(case, empty_checkout)
    tools = [*READ_ONLY_TOOLS, *tool_names(MCP_SERVER_NAME)]
    prompt = PromptLibrary().render(build_context(request), tools=tools)
    schema = json.dumps(diagnosis_json_schema(), sort_keys=True)
    digest = hashlib.sha256("\0".join([prompt.system, prompt.user, schema, ",".join(tools)]).encode())
    return digest.hexdigest()[:16]


class Eval:
    """Runs the cases of one folder, writing only under `output`."""

    def __init__(self, cases: list[LoadedCase], output: Path, *, fix: bool = False) -> None:
        """`fix`: apply each recorded fix in a scratch copy and run the bug's tests (`fixes.py`)."""
        self.cases = with_stored_sources(cases, output / SOURCES)
        self.output = output
        self.fix = fix
        self._failed_before: dict[tuple[str, ...], bool] = {}
        self.empty = output / EMPTY_CHECKOUT
        self.empty.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ the rows

    def baseline(self) -> list[CaseRun]:
        return [self._answered(loaded, BASELINE, BASELINE, self._baseline_outcome) for loaded in self.cases]

    def replay(self, label: str, recordings: dict[str, LoadedRecording]) -> list[CaseRun]:
        origin = next((r.recording.origin for r in recordings.values() if r.recording), "recorded")
        runs = []
        for loaded in self.cases:
            found = recordings.get(loaded.id)
            if loaded.case is None:
                runs.append(self._problem(loaded, label, origin, f"broken case: {loaded.problem}"))
            elif found is None:
                runs.append(self._problem(loaded, label, origin, "no recording"))
            elif found.recording is None:
                runs.append(self._problem(loaded, label, origin, found.problem or "broken recording"))
            else:
                runs.append(self._replayed(loaded, label, found.recording))
        return runs

    def live(
        self,
        label: str,
        diagnoser: Diagnoser,
        *,
        max_cost_usd: float,
        record: Path | None = None,
        on_case: Callable[[CaseRun], None] | None = None,
        fixer: FixEditor | None = None,
    ) -> list[CaseRun]:
        """`fixer`: with `fix`, it proposes a fix for each case whose tests can run, from the answer."""
        spent = 0.0
        runs = []
        for loaded in self.cases:
            run = self._live_one(loaded, label, diagnoser, max_cost_usd - spent, record, fixer)
            spent += run.cost_usd
            runs.append(run)
            if on_case is not None:
                on_case(run)
        return runs

    # ------------------------------------------------------------------ one case

    def _request(self, loaded: LoadedCase) -> tuple[Case, DiagnosisRequest]:
        assert loaded.case is not None
        return loaded.case, case_request(loaded.case, loaded.sources or self.empty)

    def _baseline_outcome(self, loaded: LoadedCase) -> DiagnosisOutcome:
        case, request = self._request(loaded)
        return _checked(baseline_answer(case), request)

    def _answered(
        self, loaded: LoadedCase, label: str, origin: str, answer: Callable[[LoadedCase], DiagnosisOutcome]
    ) -> CaseRun:
        if loaded.case is None:
            return self._problem(loaded, label, origin, f"broken case: {loaded.problem}")
        return self._scored(loaded, label, origin, answer(loaded))

    def _replayed(self, loaded: LoadedCase, label: str, recording: Recording) -> CaseRun:
        if loaded.case is None:
            return self._problem(loaded, label, recording.origin, f"broken case: {loaded.problem}")
        case, request = self._request(loaded)
        if recording.status != "ok" or recording.answer is None:
            outcome = DiagnosisOutcome(
                status="api_error" if recording.status == "ok" else recording.status,
                detail=recording.detail or "the recording holds no answer",
                turns=recording.turns,
                cost_usd=recording.cost_usd,
            )
        else:
            outcome = _checked(
                recording.answer, request, turns=recording.turns, cost=recording.cost_usd, lookups=recording
            )
        run = self._scored(loaded, label, recording.origin, outcome)
        stale = recording.prompt_fingerprint != prompt_fingerprint(case, self.empty)
        fix = self._check_fix(loaded, label, recording.fix_patch) if self.fix else None
        return run.model_copy(update={"stale": stale, "fix": fix})

    def _live_one(
        self,
        loaded: LoadedCase,
        label: str,
        diagnoser: Diagnoser,
        remaining: float,
        record: Path | None,
        fixer: FixEditor | None = None,
    ) -> CaseRun:
        if loaded.case is None:
            return self._problem(loaded, label, "live", f"broken case: {loaded.problem}")
        if loaded.sources_missing:
            return self._problem(loaded, label, "live", "sources missing: no model asked")
        case, request = self._request(loaded)
        try:
            estimate = diagnoser.estimate_cost(request)
            if estimate > remaining:
                return self._problem(
                    loaded,
                    label,
                    "live",
                    f"not run: ${estimate:.2f} estimated, ${max(remaining, 0):.2f} left",
                )
            outcome = diagnoser.diagnose(request)
        except RoundsError as error:
            return self._problem(loaded, label, "live", f"model error: {error}")
        patch, fix_cost = None, 0.0
        if self.fix and fixer is not None and runnable(loaded) and outcome.diagnosis is not None:
            proposed = propose_fix(
                loaded,
                outcome.diagnosis,
                fixer,
                self.output / PROPOSALS / label,
                max_cost_usd=remaining - outcome.cost_usd,
            )
            patch, fix_cost = proposed.patch, proposed.cost_usd
        if record is not None:
            recording = recording_from_outcome(case, outcome, self.empty)
            save_recording(record, label, recording.model_copy(update={"fix_patch": patch}))
        run = self._scored(loaded, label, "live", outcome)
        update: dict[str, Any] = {"cost_usd": run.cost_usd + fix_cost}
        if self.fix:
            update["fix"] = self._check_fix(loaded, label, patch)
        return run.model_copy(update=update)

    def _check_fix(self, loaded: LoadedCase, label: str, patch: str | None) -> FixCheck:
        return check_fix(loaded, patch, self.output / FIXES / label, self._failed_before)

    def _scored(self, loaded: LoadedCase, label: str, origin: str, outcome: DiagnosisOutcome) -> CaseRun:
        assert loaded.case is not None
        case = loaded.case
        problem = None if outcome.status == "ok" else f"model error: {outcome.status}: {outcome.detail}"
        return CaseRun(
            case_id=case.id,
            kind=case.kind,
            dataset=case.origin.dataset,
            label=label,
            origin=origin,
            located=bool(case.truth.faults),
            score=score(case, outcome, sources=not loaded.sources_missing),
            problem=problem,
            sources_missing=loaded.sources_missing,
            turns=outcome.turns,
            cost_usd=outcome.cost_usd,
        )

    def _problem(self, loaded: LoadedCase, label: str, origin: str, problem: str) -> CaseRun:
        case = loaded.case
        return CaseRun(
            case_id=loaded.id,
            kind=case.kind if case else "unknown",
            dataset=case.origin.dataset if case else "unknown",
            label=label,
            origin=origin,
            located=bool(case and case.truth.faults),
            problem=problem,
            sources_missing=loaded.sources_missing,
        )


def _checked(
    answer: dict[str, Any],
    request: DiagnosisRequest,
    *,
    turns: int = 0,
    cost: float = 0.0,
    lookups: Recording | None = None,
) -> DiagnosisOutcome:
    """The answer through the CLI result reader: the same validation, redaction and checks."""
    result = {
        "type": "result",
        "subtype": "success",
        "structured_output": answer,
        "num_turns": turns,
        "total_cost_usd": cost,
    }
    return outcome_from_result(result, request, lookups=lookups.lookups if lookups else None)


def recording_from_outcome(
    case: Case, outcome: DiagnosisOutcome, empty: Path, *, origin: RecordingOrigin = "live", model: str = ""
) -> Recording:
    """A recording of an outcome, saying where its answer came from."""
    answer = outcome.diagnosis.model_dump(mode="json", exclude_none=True) if outcome.diagnosis else None
    return Recording(
        case_id=case.id,
        origin=origin,
        model=model or outcome.model or "unknown",
        prompt_fingerprint=prompt_fingerprint(case, empty),
        recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        status=outcome.status,
        detail=outcome.detail,
        answer=answer,
        lookups=outcome.lookups,
        turns=outcome.turns,
        cost_usd=outcome.cost_usd,
    )
