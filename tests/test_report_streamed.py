"""The round report streamed: its Markdown comes out in pieces of whole lines, row by row as the template
renders it, and the pieces joined are the report the template rendered whole with its table macro."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_report import busy_report, line, quiet_report

from rounds_bot.render.markdown import environment, trusted
from rounds_bot.round.report import (
    MAX_SKIPPED_SHOWN,
    PIECE_SIZE,
    RoundReport,
    SignatureLine,
    in_whole_lines,
    render_report,
    report_pieces,
)
from rounds_bot.sources.base import SkippedRecord

#: the report's template as it was when each table was a macro's one string: the reference the streamed
#: template is compared with, byte for byte
WHOLE_TABLES_TEMPLATE = """\
{%- macro table(lines) -%}
| Signature | Service | Title | Tier | This round | Total | Issue |
|---|---|---|---|---:|---:|---|
{% for l in lines -%}
| {{ l.signature_id | table_code }} | {{ l.service }} | {{ l.title | truncate(80) }} | {{ l.tier }} | \
{{ l.round_count }} | {{ l.total_count }} | {{ l.issue | issue_ref if l.issue else "—" }}\
{% if l.note %} ({{ l.note }}){% endif %} |
{% endfor -%}
{%- endmacro -%}
## rounds: round {{ r.run_id }}

Source {{ r.source | code }}, window {{ r.window_start }} → {{ r.window_end }}, \
tracker {{ r.tracker | code }}.

{% if r.quiet -%}
{% if r.events_read -%}
**Nothing new.** {{ r.events_read }} error records read; {{ r.already_counted }} occurrences were already \
counted in earlier rounds, so no count changed and no issue was filed.
{%- else -%}
**Nothing new.** No error records in this window; no count changed and no issue was filed.
{%- endif %}
{%- else -%}
**{{ r.new | length }} new, {{ r.updated | length }} updated, {{ r.regressed | length }} regressed** — \
{{ r.occurrences_counted }} new occurrences from {{ r.events_read }} error records \
({{ r.already_counted }} already counted).
{%- endif %}
{% if r.tier_counts %}
Dedup tiers this round: {% for tier, n in r.tier_counts | dictsort %}{{ tier }} {{ n }}\
{% if not loop.last %}, {% endif %}{% endfor %}.
{% endif %}
{%- if r.new %}
### New signatures
{{ table(r.new) | safe }}
{%- endif %}
{%- if r.regressed %}
### Regressed
{{ table(r.regressed) | safe }}
{%- endif %}
{%- if r.updated %}
### Updated
{{ table(r.updated) | safe }}
{%- endif %}
{%- if r.deferred %}
### Deferred to the next round
{{ table(r.deferred) | safe }}
{%- endif %}
{%- if r.diagnosed %}
### Diagnosed
{% for l in r.diagnosed -%}
- {{ l.signature_id | code }} {{ l.title | truncate(60) }}: {{ l.note }}
{% endfor -%}
{%- endif %}
{%- if r.waiting %}
### Not diagnosed this round
{% for l in r.waiting -%}
- {{ l.signature_id | code }} {{ l.title | truncate(60) }}: {{ l.note }}
{% endfor -%}
{%- endif %}
{%- if r.skipped %}
### Skipped records ({{ r.skipped | length }})
{% for s in skipped -%}
- {{ s.where }}: {{ s.reason }}
{% endfor -%}
{% if more_skipped %}- … and {{ more_skipped }} more
{% endif -%}
{%- endif %}
{%- if trend %}
### New and ongoing signatures
{{ trend }}
{% endif -%}
{%- if r.notes %}
### Notes
{% for n in r.notes -%}
- {{ n }}
{% endfor -%}
{%- endif %}
{%- if r.diagnosis_mode %}
{{ r.diagnosis_mode[:1] | upper }}{{ r.diagnosis_mode[1:] }}. Model calls this round: {{ r.model_calls }}, \
spent ${{ "%.4f" | format(r.spent_usd) }}{% if r.budget_remaining_usd is not none %}; remaining this month: \
${{ "%.2f" | format(r.budget_remaining_usd) }}{% endif %}.
{% endif -%}
"""


def rendered_whole(report: RoundReport) -> str:
    """The report as the template with its table macro rendered it, in one string."""
    template = environment().from_string(WHOLE_TABLES_TEMPLATE)
    return template.render(
        r=report,
        trend=trusted(report.trend) if report.trend else None,
        skipped=report.skipped[:MAX_SKIPPED_SHOWN],
        more_skipped=max(len(report.skipped) - MAX_SKIPPED_SHOWN, 0),
    )


# untrusted text as telemetry brings it: Markdown and GitHub constructs, line breaks of every kind, a
# terminal's escape, invisible and wide characters
_TEXT = st.text(alphabet=st.sampled_from("aZ09 _-|`*#@<>[]()!$~\\&/:.\n\r\t\u2028\x1b\u200bé✓—"), max_size=90)
_LINE = st.builds(
    SignatureLine,
    signature_id=_TEXT,
    title=_TEXT,
    service=_TEXT,
    tier=_TEXT,
    round_count=st.integers(min_value=0, max_value=10**9),
    total_count=st.integers(min_value=0, max_value=10**12),
    issue=st.none() | st.sampled_from(["#12", "#7"]) | _TEXT,
    note=_TEXT,
)
_LINES = st.lists(_LINE, max_size=6)
_REPORT = st.builds(
    RoundReport,
    run_id=_TEXT,
    source=_TEXT,
    tracker=_TEXT,
    window_start=_TEXT,
    window_end=_TEXT,
    events_read=st.integers(min_value=0, max_value=10**6),
    occurrences_counted=st.integers(min_value=0, max_value=10**6),
    already_counted=st.integers(min_value=0, max_value=10**6),
    new=_LINES,
    updated=_LINES,
    regressed=_LINES,
    deferred=_LINES,
    diagnosed=_LINES,
    waiting=_LINES,
    model_calls=st.integers(min_value=0, max_value=100),
    diagnosis_mode=_TEXT,
    skipped=st.lists(st.builds(SkippedRecord, where=_TEXT, reason=_TEXT), max_size=MAX_SKIPPED_SHOWN + 3),
    notes=st.lists(_TEXT, max_size=3),
    tier_counts=st.dictionaries(_TEXT, st.integers(min_value=0, max_value=10**6), max_size=4),
    spent_usd=st.floats(min_value=0, max_value=1_000, allow_nan=False),
    budget_remaining_usd=st.none() | st.floats(min_value=-10, max_value=1_000, allow_nan=False),
    trend=_TEXT,
)


def test_the_golden_reports_streamed_are_the_reports_rendered_whole():
    for report in (busy_report(), quiet_report()):
        assert "".join(report_pieces(report)) == render_report(report) == rendered_whole(report)


@settings(max_examples=200, deadline=None)
@given(_REPORT)
def test_any_report_streamed_is_the_report_rendered_whole(report):
    assert "".join(report_pieces(report)) == render_report(report) == rendered_whole(report)


def test_a_report_of_thousands_of_rows_comes_out_in_pieces_of_whole_lines_none_growing_with_the_rows():
    report = busy_report().model_copy(
        update={"new": [line(n) for n in range(20_000)], "updated": [line(n) for n in range(5_000)]}
    )
    pieces = list(report_pieces(report))
    assert len(pieces) > 20 and all(piece.endswith("\n") for piece in pieces[:-1])
    # a piece ends at the first batch of the template's fragments with a line end past the size: a few
    # kilobytes of rows past it, whatever the number of rows
    assert max(len(piece) for piece in pieces) < 2 * PIECE_SIZE
    assert "".join(pieces) == rendered_whole(report)


@given(
    st.lists(st.text(alphabet=st.sampled_from("ab\n\r✓"), max_size=12), max_size=40),
    st.integers(1, 30),
    st.integers(1, 5),
)
def test_fragments_gathered_into_whole_lines_are_the_fragments_joined(fragments, size, at_once):
    pieces = list(in_whole_lines(fragments, size, at_once))
    assert "".join(pieces) == "".join(fragments)
    assert all(piece for piece in pieces)
    assert all(piece.endswith("\n") for piece in pieces[:-1])
