"""An issue's body stays within GitHub's limit whatever the telemetry sent: a client can set its version and
environment to anything (a browser's or a phone's SDK reports them), and a body over the limit is refused by
GitHub round after round. The Occurrences table lists the first values, the marker remembers a bounded set,
and the sections whose size the telemetry decides give way last."""

from __future__ import annotations

from test_github_render import view

from rounds_bot.marker import MarkerState, read_marker
from rounds_bot.render.issue import LEFT_OUT, LISTED_VALUES, MAX_BODY_CHARS, listed, render_body
from rounds_bot.signature import REMEMBERED_CHARS, REMEMBERED_VALUES, remembered

#: 300 versions and environments of 240 characters each, as a hostile client may send them
VERSIONS = [f"{n}." + "v" * 240 for n in range(300)]
ENVIRONMENTS = [f"e{n}-" + "w" * 240 for n in range(300)]


def _marker(**values: list[str]) -> MarkerState:
    return MarkerState(signature_id="sig_5d9824aaacee071a", service="checkout", **values)


def test_the_table_lists_the_first_values_each_cut_and_how_many_more() -> None:
    shown = listed(sorted(VERSIONS))
    assert len(shown) == LISTED_VALUES + 1
    assert all(len(value) <= 80 for value in shown[:-1])
    assert shown[-1] == f"and {300 - LISTED_VALUES} more"
    assert listed(["1.4.2", "1.4.3"]) == ["1.4.2", "1.4.3"]


def test_the_marker_remembers_a_bounded_set_of_short_values() -> None:
    kept = remembered(frozenset([*VERSIONS, *(f"1.{n}" for n in range(150)), "2.0"]))
    assert len(kept) == REMEMBERED_VALUES
    assert all(len(value) <= REMEMBERED_CHARS for value in kept)
    assert kept == sorted(kept) and "1.0" in kept
    assert remembered(frozenset({"1.4.3", "1.4.2"})) == ["1.4.2", "1.4.3"]


def test_a_body_of_hundreds_of_long_versions_and_environments_fits_and_keeps_its_marker() -> None:
    body = render_body(
        view(
            versions=sorted(VERSIONS),
            environments=sorted(ENVIRONMENTS),
            marker=_marker(
                versions=remembered(frozenset(VERSIONS)), environments=remembered(frozenset(ENVIRONMENTS))
            ),
        )
    )
    assert len(body) <= MAX_BODY_CHARS
    assert f"and {300 - LISTED_VALUES} more" in body
    assert read_marker(body).signature_id == "sig_5d9824aaacee071a"


def test_a_record_whose_details_cannot_fit_is_filed_without_them_saying_so() -> None:
    table = "| Attribute | Value |\n|---|---|\n" + "\n".join(f"| `a{n}` | {'x' * 200} |" for n in range(400))
    body = render_body(view(context_title="Request", context_markdown=table))
    assert len(body) <= MAX_BODY_CHARS
    assert LEFT_OUT in body and "`a1`" not in body
    # what the issue is about stays: its summary, stack trace and diagnosis
    assert "Representative stack trace" in body and "### Root cause" in body
    assert read_marker(body).signature_id == "sig_5d9824aaacee071a"


def test_a_body_that_fits_keeps_every_section() -> None:
    table = "| Attribute | Value |\n|---|---|\n| `http.route` | /cart |"
    body = render_body(view(context_title="Request", context_markdown=table))
    assert LEFT_OUT not in body and "`http.route`" in body


def test_a_marker_of_hundreds_of_non_ascii_versions_still_leaves_the_body_within_the_limit() -> None:
    """The marker writes its state as ASCII JSON, so each character of a Chinese or emoji version takes six
    or twelve characters there: a hundred remembered values of 200 such characters are 120,000 characters of
    marker alone. The body still fits GitHub's limit, and its marker still names its signature."""
    versions = [f"{n}." + "版" * 190 for n in range(300)]
    environments = [f"e{n}-" + "\U0001f600" * 190 for n in range(300)]
    marker = _marker(
        versions=remembered(frozenset(versions)), environments=remembered(frozenset(environments))
    )
    body = render_body(view(versions=sorted(versions), environments=sorted(environments), marker=marker))
    assert len(body) <= MAX_BODY_CHARS
    read = read_marker(body)
    assert read is not None and read.signature_id == "sig_5d9824aaacee071a"
    assert read.service == "checkout"


def test_a_long_trace_is_cut_before_the_marker_forgets_any_value() -> None:
    """A hundred ASCII versions of 194 characters (within what the marker keeps) and a trace of 63,780
    characters: cutting the trace is enough, so the marker keeps every service, version and environment a
    database rebuilt from the issue reads back."""
    versions = [f"1.{n}.0+build." + "a" * 180 for n in range(100)]
    marker = view().marker.model_copy(
        update={"services": ["cart", "checkout"], "versions": remembered(frozenset(versions))}
    )
    trace = "".join(f'  File "checkout/x{n}.py", line {n}, in f\n' for n in range(1500))
    body = render_body(view(marker=marker, versions=sorted(versions), stacktrace=trace))
    assert len(body) <= MAX_BODY_CHARS
    read = read_marker(body)
    assert read is not None and read.versions == marker.versions and read.services == ["cart", "checkout"]


def test_a_marker_too_large_for_any_body_lets_go_of_its_largest_values_only() -> None:
    """When every other cut leaves the body over the limit, the marker drops values from the largest
    written down (a character outside ASCII takes six or twelve in its JSON) and keeps the rest."""
    emoji = [f"e{n}-" + "\U0001f600" * 190 for n in range(100)]
    short = [f"1.{n}" for n in range(100)]
    marker = _marker(services=["cart", "checkout"], versions=remembered(frozenset(short)), environments=emoji)
    body = render_body(view(marker=marker, versions=short, environments=sorted(emoji)))
    assert len(body) <= MAX_BODY_CHARS
    read = read_marker(body)
    assert read is not None and read.services == ["cart", "checkout"] and read.versions == marker.versions
    assert 0 < len(read.environments) < len(emoji)
    assert set(read.environments) <= set(emoji)
