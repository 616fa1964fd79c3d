"""Trend pictures: Mermaid xychart blocks of bounded size, or small tables where charts are off."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from rounds_bot.render.chart import MAX_BARS, occurrence_chart, rounds_chart

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def bars(chart: str) -> list[int]:
    line = next(line for line in chart.splitlines() if line.strip().startswith("bar ["))
    return [int(v) for v in line.split("[", 1)[1].rstrip("]").split(",")]


def test_six_hours_of_occurrences_are_shown_per_hour_from_the_first_to_the_last():
    counts = {T0 + timedelta(minutes=5 * i): 1 for i in range(72)}  # 10:00 to 15:55
    chart = occurrence_chart(counts)
    assert chart.startswith("```mermaid\nxychart-beta") and chart.endswith("```")
    assert 'title "Occurrences per hour (UTC)"' in chart
    assert bars(chart) == [12] * 6 and '"11-01 10:00"' in chart and '"11-01 15:00"' in chart


def test_a_long_history_keeps_the_latest_bars_and_never_more_than_the_limit():
    counts = {T0 + timedelta(days=d): d + 1 for d in range(400)}
    chart = occurrence_chart(counts)
    assert "per week" in chart and len(bars(chart)) == MAX_BARS
    shown = bars(chart)
    assert shown[-1] > 0 and sum(shown) < sum(counts.values())  # the newest weeks, not the oldest


def test_without_charts_the_same_figures_come_as_a_table_of_the_bins_that_saw_something():
    counts = {T0: 3, T0 + timedelta(hours=2): 5}
    table = occurrence_chart(counts, mermaid=False)
    assert "mermaid" not in table and "| 11-01 10:00 | 3 |" in table and "| 11-01 12:00 | 5 |" in table
    assert "| 11-01 11:00 |" not in table
    assert occurrence_chart({}) == ""


def test_the_job_summary_chart_shows_new_as_bars_and_ongoing_as_a_line():
    rounds = [(T0 + timedelta(minutes=30 * i), i % 3, 10 + i) for i in range(30)]
    chart = rounds_chart(rounds)
    assert "bar [" in chart and "line [" in chart
    assert len(bars(chart)) == MAX_BARS  # the latest rounds only
    assert "| round | new | ongoing |" in rounds_chart(rounds, mermaid=False)


def test_rounds_in_the_same_minute_get_labels_of_their_own_so_mermaid_keeps_every_bar():
    rounds = [
        (T0, 1, 5),
        (T0 + timedelta(seconds=20), 0, 6),  # same minute: told apart by the seconds
        (T0 + timedelta(seconds=20, milliseconds=300), 2, 6),  # same second too: a run index suffix
        (T0 + timedelta(minutes=5), 0, 6),  # alone in its minute: to the minute, as before
    ]
    chart = rounds_chart(rounds)
    axis = next(line for line in chart.splitlines() if "x-axis" in line)
    assert axis == '    x-axis ["11-01 10:00:00", "11-01 10:00:20 (1)", "11-01 10:00:20 (2)", "11-01 10:05"]'
    assert bars(chart) == [1, 0, 2, 0]
    table = rounds_chart(rounds, mermaid=False)
    assert "| 11-01 10:00:20 (2) | 2 | 6 |" in table and "| 11-01 10:05 | 0 | 6 |" in table


def _bars_by_dates(counts: dict[datetime, int], starts: list[datetime], step: timedelta) -> list[int]:
    """Each moment's bar found by flooring it to its bin as a date and dividing (the plain reading)."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    shown = [0] * len(starts)
    for moment, count in counts.items():
        index = int((epoch + ((moment - epoch) // step) * step - starts[0]) / step)
        if 0 <= index < len(shown):
            shown[index] += count
    return shown


def test_bars_count_each_moment_in_the_bin_its_date_falls_in_for_every_bin_size():
    picker = random.Random(26)
    for spread in (
        timedelta(minutes=50),
        timedelta(hours=20),
        timedelta(days=5),
        timedelta(days=20),
        timedelta(days=900),
    ):
        counts = {
            T0 + timedelta(seconds=picker.uniform(0, spread.total_seconds())): picker.randint(1, 9)
            for _ in range(300)
        }
        chart = occurrence_chart(counts, mermaid=False)
        unit = chart.split("per ", 1)[1].split(" (UTC)")[0]
        step = {
            "5 minutes": timedelta(minutes=5),
            "hour": timedelta(hours=1),
            "6 hours": timedelta(hours=6),
        }.get(unit, timedelta(days=1) if unit == "day" else timedelta(days=7))
        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        end = epoch + ((max(counts) - epoch) // step) * step
        first = epoch + ((min(counts) - epoch) // step) * step
        starts = [s for s in (end - step * i for i in reversed(range(MAX_BARS))) if s + step > first] or [end]
        assert bars(occurrence_chart(counts)) == _bars_by_dates(counts, starts, step)


def test_the_bars_shown_start_with_the_first_occurrences_bin_whatever_the_history():
    """The first bar shown is the first occurrence's bin (the bins start whole steps apart, so it is counted,
    not searched for), or the oldest of the MAX_BARS bins when the history is longer."""
    picker = random.Random(7)
    for _ in range(300):
        last = T0 + timedelta(seconds=picker.uniform(0, 10**7))
        first = last - timedelta(seconds=picker.choice((0, 1, 299, 300, 301, 3600 * 30, 86_400 * 400)))
        counts = {first: 1, last: 2} if first != last else {last: 3}
        chart = occurrence_chart(counts, mermaid=False)
        unit = chart.split("per ", 1)[1].split(" (UTC)")[0]
        step = {
            "5 minutes": timedelta(minutes=5),
            "hour": timedelta(hours=1),
            "6 hours": timedelta(hours=6),
            "day": timedelta(days=1),
        }.get(unit, timedelta(days=7))
        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        end = epoch + ((last - epoch) // step) * step
        start = epoch + ((first - epoch) // step) * step
        every = [end - step * i for i in reversed(range(MAX_BARS))]
        starts = every[next(i for i, s in enumerate(every) if s + step > start) :]
        x_axis = next(line for line in occurrence_chart(counts).splitlines() if "x-axis" in line)
        label_format = {"day": "%Y-%m-%d", "week": "%Y-%m-%d"}.get(unit, "%m-%d %H:00")
        label_format = "%m-%d %H:%M" if unit == "5 minutes" else label_format
        assert x_axis.count('"') == 2 * len(starts)
        assert x_axis.split("[", 1)[1].startswith(f'"{starts[0].strftime(label_format)}"')
