"""The demo telemetry read twice, through the SigNoz emulator and from the OTLP file itself, and what
rounds makes of each: signatures, titles, environments, counts, first and last seen, and the triage
decision a new signature gets. Used by `test_signoz_parity.py` and printed by `bench/signoz_parity.py`.

Both reads see the same instants: the emulator keeps the file's times (no rebase) and its clock,
like the source's, stands a minute after the newest record.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from signoz_emulator import Behaviour, SignozEmulator, build_dataset

from rounds_bot.controls import Controls
from rounds_bot.round.occurrences import group_occurrences, load_engine
from rounds_bot.settings import Settings
from rounds_bot.sources.base import PollResult, Source, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.signoz.source import SignozSource
from rounds_bot.sources.signoz.times import NS_PER_S, ns_to_datetime
from rounds_bot.store import Store
from rounds_bot.triage import SignatureActivity, TriagePolicy, decide

KEY = "parity-key"


@dataclass(frozen=True)
class SignatureView:
    signature_id: str
    title: str
    count: int
    first_seen: datetime | None
    last_seen: datetime | None
    environments: frozenset[str]
    diagnose: bool
    reason: str


def newest_ns(path: Path) -> int:
    from signoz_emulator.data import newest_in_lines

    with path.open(encoding="utf-8") as handle:
        newest = newest_in_lines(handle)
    assert newest is not None
    return newest


def signatures_of(source: Source, window: Window) -> dict[str, SignatureView]:
    """What one round makes of a poll of `window`: each new signature with its triage decision."""
    polled = source.poll(window, frozenset())
    return views(polled, window)


def views(polled: PollResult, window: Window) -> dict[str, SignatureView]:
    store = Store.memory()
    engine = load_engine(Settings(), store)
    grouped = group_occurrences(store, engine, Controls(), window, polled)
    hours = max((window.end - window.start).total_seconds() / 3600, 1 / 60)
    out: dict[str, SignatureView] = {}
    for signature_id, tally in grouped.tallies.items():
        decision = decide(
            SignatureActivity(signature_id=signature_id, occurrences=tally.timeline, window_hours=hours),
            now=window.end,
            code_revision="parity",
            policy=TriagePolicy(),
        )
        out[signature_id] = SignatureView(
            signature_id=signature_id,
            title=tally.assignment.title,
            count=tally.count,
            first_seen=tally.first_seen,
            last_seen=tally.last_seen,
            environments=frozenset(tally.environments),
            diagnose=decision.diagnose,
            reason=decision.reason,
        )
    return out


def both(path: Path, version: str = "v0.138.0") -> tuple[dict[str, SignatureView], dict[str, SignatureView]]:
    """(through SigNoz `version`, from the file) for the same telemetry."""
    now_ns = newest_ns(path) + 60 * NS_PER_S
    now = now_ns / NS_PER_S
    end = ns_to_datetime(now_ns) - timedelta(seconds=30)
    window = Window(start=end - timedelta(hours=12), end=end)
    dataset = build_dataset(
        [path], rebase=False, synthetic_events=0, synthetic_groups=0, window_seconds=0, now_ns=now_ns
    )
    with (
        SignozEmulator(dataset, Behaviour(api_key=KEY, version=version), now=lambda: now) as emulator,
        SignozSource(emulator.url, KEY, wall_clock=lambda: now) as signoz,
    ):
        through_signoz = signatures_of(signoz, window)
    file_window = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=end)
    from_file = signatures_of(OtlpFileSource(path, name=f"otlp-file:{path}"), file_window)
    return through_signoz, from_file


def table(through_signoz: dict[str, SignatureView], from_file: dict[str, SignatureView]) -> list[str]:
    """One line per signature: both reads side by side."""

    def cell(view: SignatureView | None) -> str:
        if view is None:
            return "-"
        first = view.first_seen.strftime("%H:%M:%S") if view.first_seen else "?"
        last = view.last_seen.strftime("%H:%M:%S") if view.last_seen else "?"
        envs = ",".join(sorted(view.environments)) or "no env"
        return f"{view.count:>4} {first}-{last} {envs:<12} {'DIAGNOSE' if view.diagnose else 'wait':<8}"

    lines = [f"{'signature':<18} {'title':<48} | {'through SigNoz':<45} | from the OTLP file"]
    for signature_id in sorted(set(through_signoz) | set(from_file)):
        view = through_signoz.get(signature_id) or from_file[signature_id]
        lines.append(
            f"{signature_id[:18]:<18} {view.title[:48]:<48} | "
            f"{cell(through_signoz.get(signature_id)):<45} | {cell(from_file.get(signature_id))}"
        )
    diagnosed_signoz = sum(v.diagnose for v in through_signoz.values())
    diagnosed_file = sum(v.diagnose for v in from_file.values())
    same = len(set(through_signoz) & set(from_file))
    lines.append(
        f"signatures: {len(through_signoz)} through SigNoz, {len(from_file)} from the file, {same} the same; "
        f"diagnosed: {diagnosed_signoz} vs {diagnosed_file}"
    )
    return lines


def late_rows(version: str = "v0.138.0") -> tuple[int, int, int]:
    """(late rows, counted by the next round, counted again by the round after): an exception, an error
    span and an error log reach SigNoz 60 s behind the cursor of a round that already read their minute."""
    from signoz_fixtures import T0_NS
    from signoz_rows import one_of_each

    minute = 60 * NS_PER_S
    cursor = T0_NS + 20 * minute
    with (
        SignozEmulator(
            one_of_each(T0_NS + 5 * minute, 1), Behaviour(api_key=KEY, version=version)
        ) as emulator,
        SignozSource(emulator.url, KEY, sleep=lambda seconds: None) as source,
    ):
        first = source.poll(poll_window(T0_NS, cursor), frozenset())
        one_of_each(cursor - 60 * NS_PER_S, 2).arrive(emulator.engine)
        second = source.poll(poll_window(cursor, cursor + 20 * minute, first), frozenset())
        third = source.poll(poll_window(cursor + 20 * minute, cursor + 40 * minute, second), frozenset())
    return 3, _occurrences(second), _occurrences(third)


@dataclass(frozen=True)
class FailingRound:
    failures: list[str]
    first: dict[str, SignatureView]
    second: dict[str, SignatureView]


def one_stream_failing(path: Path, version: str = "v0.138.0") -> FailingRound:
    """The demo through SigNoz with every error-log query meeting a busy ClickHouse (241), then a round
    with SigNoz well again: what each files."""
    from signoz_emulator import Fault
    from signoz_fixtures import ERROR_LOGS_QUERY

    now_ns = newest_ns(path) + 60 * NS_PER_S
    now = now_ns / NS_PER_S
    end = ns_to_datetime(now_ns) - timedelta(seconds=30)
    window = Window(start=end - timedelta(hours=12), end=end)
    dataset = build_dataset(
        [path], rebase=False, synthetic_events=0, synthetic_groups=0, window_seconds=0, now_ns=now_ns
    )
    busy = Fault("query", path="/api/v", times=-1, clickhouse_code=241, body_contains=ERROR_LOGS_QUERY)
    behaviour = Behaviour(api_key=KEY, version=version, faults=[busy])
    with (
        SignozEmulator(dataset, behaviour, now=lambda: now + 60) as emulator,
        SignozSource(emulator.url, KEY, wall_clock=lambda: now + 60, sleep=lambda seconds: None) as signoz,
    ):
        failed = signoz.poll(window, frozenset())
        behaviour.faults.clear()
        later = window.end + timedelta(seconds=60)
        known = frozenset(event.source_group_id for event in failed.events if event.source_group_id)
        next_window = Window(
            start=window.end, end=later, resume_from=window.end, source_state=failed.source_state
        )
        again = signoz.poll(next_window, known)
    # the second round read the logs from their kept cursor, back where the first window started
    read = Window(start=window.start, end=later)
    return FailingRound(failed.failures, views(failed, window), views(again, read))


def poll_window(start_ns: int, end_ns: int, before: PollResult | None = None) -> Window:
    """The window of a poll of [start, end), resuming after `before` when given (its kept state)."""
    return Window(
        start=ns_to_datetime(start_ns),
        end=ns_to_datetime(end_ns),
        resume_from=ns_to_datetime(start_ns) if before else None,
        source_state=before.source_state if before else None,
    )


def _occurrences(result: PollResult) -> int:
    return sum(event.count for event in result.events) + sum(g.count for g in result.known_group_counts)


def counts_by_kind(result: PollResult) -> dict[str, int]:
    """Occurrences a poll found, by kind of stream: new groups' events and known groups' counts."""
    counts: dict[str, int] = {}
    for event in result.events:
        counts[event.kind] = counts.get(event.kind, 0) + event.count
    for group in result.known_group_counts:
        kind = group.source_group_id.split(":")[0]
        counts[kind] = counts.get(kind, 0) + group.count
    return counts
