"""Diagnosis benchmark: context size per signature, model calls per occurrences, real CLI time.

    python bench/diagnosis.py                 # everything that can run here
    python bench/diagnosis.py --no-real-cli   # skip the real CLI run

Measures:
- on the bundled demo telemetry (rounds_bot/data/demo.otlp.jsonl), grouped by the grouping
  engine: the estimated tokens of the prompt built for each signature (context plus the system
  prompt) against the context budget;
- model calls per 1,000 occurrences as triage decides them for the demo data read as one round
  (every new signature past the default threshold, or with a fatal occurrence, costs one call);
  the round's real figure, with caching and budgets, replaces this once the round calls the
  diagnoser;
- wall time of one real Claude Code CLI diagnosis (a Read of a real file, then the structured
  answer) against the local fake Messages API, when the CLI is installed.

The last line is machine-readable:
model_calls_per_1000_occurrences=<x> max_context_tokens=<n> real_cli_seconds=<x>
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT / "tests"))

from rounds_bot.diagnosis.context import DEFAULT_BUDGET_TOKENS, build_context  # noqa: E402
from rounds_bot.diagnosis.model import (  # noqa: E402
    Diagnosis,
    DiagnosisOutcome,
    DiagnosisRequest,
    OccurrenceStats,
)
from rounds_bot.diagnosis.prompting import PromptLibrary  # noqa: E402
from rounds_bot.grouping.engine import GroupingEngine  # noqa: E402
from rounds_bot.models import ErrorEvent  # noqa: E402
from rounds_bot.round.run import run_round  # noqa: E402
from rounds_bot.settings import load_settings  # noqa: E402
from rounds_bot.sources.base import Window  # noqa: E402
from rounds_bot.sources.otlp_file import OtlpFileSource  # noqa: E402
from rounds_bot.store import Store  # noqa: E402
from rounds_bot.tracker.dryrun import DryRunTracker  # noqa: E402

DEMO = PROJECT_ROOT / "rounds_bot" / "data" / "demo.otlp.jsonl"


def demo_signatures() -> tuple[dict[str, list[ErrorEvent]], dict[str, str]]:
    window = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
    events = OtlpFileSource(DEMO).poll(window).events
    engine = GroupingEngine()
    groups: dict[str, list[ErrorEvent]] = defaultdict(list)
    titles: dict[str, str] = {}
    for event in events:
        assignment = engine.assign(event)
        groups[assignment.signature_id].append(event)
        titles[assignment.signature_id] = assignment.title
    return groups, titles


def request_for(signature_id: str, title: str, events: list[ErrorEvent]) -> DiagnosisRequest:
    first = events[0]
    return DiagnosisRequest(
        signature_id=signature_id,
        title=title,
        service=first.service,
        error_type=first.error_type,
        error_code=first.error_code,
        normalized_message=first.message,
        stacktrace=first.stacktrace,
        sample_events=events[:50],
        stats=OccurrenceStats(
            total=sum(e.count for e in events),
            in_window=sum(e.count for e in events),
            first_seen=min(e.timestamp for e in events),
            last_seen=max(e.timestamp for e in events),
            services=sorted({e.service for e in events}),
            service_versions=sorted({e.service_version for e in events if e.service_version}),
        ),
        checkout=PROJECT_ROOT,
        code_revision="bench",
    )


def context_sizes(groups, titles) -> list[tuple[str, int, int, int]]:
    library = PromptLibrary()
    rows = []
    for signature_id, events in sorted(groups.items()):
        request = request_for(signature_id, titles[signature_id], events)
        context = build_context(request, budget_tokens=DEFAULT_BUDGET_TOKENS)
        prompt = library.render(context, tools=["Read", "Grep", "Glob"])
        rows.append((signature_id, sum(e.count for e in events), context.tokens, prompt.tokens))
    return rows


class CountingDiagnoser:
    """Answers every request with a valid abstention and counts the calls: the round's logic decides."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def estimate_cost(self, request: DiagnosisRequest) -> float:
        return 0.01

    def diagnose(self, request: DiagnosisRequest) -> DiagnosisOutcome:
        self.calls += 1
        answer = Diagnosis(
            classification="unknown",
            unknown_reason="benchmark",
            root_cause="not analysed",
            evidence=[],
            suggested_fix="",
            confidence="low",
        )
        return DiagnosisOutcome(status="ok", diagnosis=answer, cost_usd=0.01, model="bench")


def round_calls_per_thousand() -> tuple[float, int, int]:
    """Two demo rounds through the real round: model calls per 1,000 occurrences, and each round's calls."""
    with tempfile.TemporaryDirectory() as scratch:
        settings = load_settings(
            signatures_db_path=Path(scratch) / "rounds.db", output_dir=Path(scratch) / "out"
        )
        store = Store.open(settings.signatures_db_path)
        diagnoser = CountingDiagnoser()
        calls = []
        occurrences = 0
        for _ in range(2):
            before = diagnoser.calls
            report = run_round(
                settings,
                OtlpFileSource(DEMO),
                DryRunTracker(settings.output_dir),
                store,
                reads_whole_history=True,
                diagnoser=diagnoser,
                diagnosis_mode="bench",
            )
            occurrences += report.occurrences_counted
            calls.append(diagnoser.calls - before)
        store.close()
    return 1000 * sum(calls) / occurrences, calls[0], calls[1]


def real_cli_seconds() -> float | None:
    from diagnosis_samples import fake_api_diagnoser, find_claude, good_answer, make_checkout, sample_request
    from fake_messages_api import FakeMessagesApi, ToolUse, structured_output, turn

    binary = find_claude()
    if binary is None:
        return None
    with tempfile.TemporaryDirectory() as scratch:
        checkout = make_checkout(Path(scratch) / "repo")
        script = [
            turn(ToolUse("Read", {"file_path": str(checkout / "shop" / "cart.py")})),
            structured_output(good_answer()),
        ]
        with FakeMessagesApi(script) as api:
            diagnoser = fake_api_diagnoser(binary, api, timeout_seconds=120)
            started = time.perf_counter()
            outcome = diagnoser.diagnose(sample_request(checkout))
            seconds = time.perf_counter() - started
    if outcome.status != "ok":
        raise SystemExit(f"the real CLI run failed: {outcome.status}: {outcome.detail}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-real-cli", action="store_true")
    arguments = parser.parse_args()

    groups, titles = demo_signatures()
    rows = context_sizes(groups, titles)
    print(f"demo: {sum(len(e) for e in groups.values())} events, {len(groups)} signatures")
    print(f"context budget: {DEFAULT_BUDGET_TOKENS} tokens")
    print(f"{'signature':<28}{'occurrences':>12}{'context':>10}{'prompt':>10}")
    for signature_id, occurrences, context_tokens, prompt_tokens in rows:
        print(f"{signature_id[:27]:<28}{occurrences:>12}{context_tokens:>10}{prompt_tokens:>10}")
    max_context = max((row[2] for row in rows), default=0)
    max_prompt = max((row[3] for row in rows), default=0)
    print(f"max context tokens {max_context} (budget {DEFAULT_BUDGET_TOKENS}); max prompt {max_prompt}")

    calls, first, second = round_calls_per_thousand()
    print(
        f"two demo rounds: {first} model calls in the first, {second} in the second (nothing new): "
        f"{calls:.2f} per 1,000 occurrences; duplicates cost nothing"
    )

    seconds = None if arguments.no_real_cli else real_cli_seconds()
    print("real CLI: " + ("not run" if seconds is None else f"{seconds:.2f} s for one diagnosis"))
    cli = "nan" if seconds is None else f"{seconds:.2f}"
    print(
        f"model_calls_per_1000_occurrences={calls:.2f} max_context_tokens={max_context} "
        f"real_cli_seconds={cli}"
    )


if __name__ == "__main__":
    main()
