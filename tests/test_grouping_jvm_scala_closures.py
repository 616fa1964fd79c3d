"""Scala closures (2.12 and later) are methods named `$anonfun$<method>$<n>`, numbered in the method's source
order: a closure added earlier in the method renumbers the rest. The number is left out, as a Java lambda's is
(`lambda$validate$<n>`), so one bug across builds is one signature; a signature the previous release made with
the number keeps receiving its events. An anonymous class's number (`Parser$1.run`) is kept: its frames name
no enclosing method, so two anonymous classes of one class would differ by nothing else."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import ParsedTrace, as_read_before, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MESSAGE = "key not found: user-1"


def _invoicer(closure: int) -> str:
    return f"""java.util.NoSuchElementException: {MESSAGE}
	at scala.collection.immutable.Map$Map1.apply(Map.scala:245)
	at com.acme.billing.Invoicer.$anonfun$render${closure}(Invoicer.scala:51)
	at com.acme.billing.Invoicer.$anonfun$render${closure}$adapted(Invoicer.scala:50)
	at scala.collection.immutable.List.map(List.scala:293)
	at com.acme.billing.Invoicer.render(Invoicer.scala:50)
	at com.acme.billing.Main$.main(Main.scala:12)
	at com.acme.billing.Main.main(Main.scala)
"""


INVOICER = _invoicer(1)
#: the hashes the previous release stored for a signature it made from `INVOICER` (its `GroupingEngine`
#: assigned an event of service `billing` with that stack trace, and its state of the signature held these; no
#: text reads so in this version, which leaves the closure's number out of every name)
PREVIOUS_RELEASE_HASHES = (
    "70b31b138d1feb7bed7977d6a82d26fa9140f0747141296cbf70913a2b6918e2",
    "1bd169774d09b7b7ba9850e03f82109ea2bd5c22c428f26d9a9de3612cb80e4a",
    "7fbc49985fd9cff3d8e534d324bd8e1d9982d5e8570c45982ff7a9950155046e",
)


def _event(n: int, stacktrace: str, service: str = "billing") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service=service,
        error_type="java.util.NoSuchElementException",
        message=MESSAGE,
        stacktrace=stacktrace,
    )


def _functions(text: str) -> list[str | None]:
    trace = parse_stacktrace(text)
    assert trace is not None
    return [frame.function for frame in trace.exceptions[0].frames]


@pytest.mark.parametrize(
    ("symbol", "function"),
    [
        ("com.acme.billing.Invoicer.$anonfun$render$1", "$anonfun$render$<n>"),
        ("com.acme.billing.Invoicer.$anonfun$render$12$adapted", "$anonfun$render$<n>$adapted"),
        # a closure of a specialised function type (`() => Unit`), as Spark's traces print them
        (
            "org.apache.spark.util.Utils$.$anonfun$tryLogNonFatalError$1$mcV$sp",
            "$anonfun$tryLogNonFatalError$<n>$mcV$sp",
        ),
        ("com.acme.billing.Invoicer.$anonfun$applyOrElse$3", "$anonfun$applyOrElse$<n>"),
        # a Java lambda, as before
        ("com.acme.ingest.Parser.lambda$parse$0", "lambda$parse$<n>"),
        # Scala 2.11's closure classes call `apply`: the name is the method's, as before
        ("com.acme.billing.Invoicer$$anonfun$render$1.apply", "apply"),
    ],
)
def test_a_scala_closures_number_is_left_out_of_its_name(symbol: str, function: str) -> None:
    text = f"java.lang.IllegalStateException: x\n\tat {symbol}(Invoicer.scala:51)\n"
    assert _functions(text) == [function]


def test_one_bug_across_builds_that_renumbered_its_closure_is_one_signature() -> None:
    found = GroupingEngine().assign_all([_event(1, INVOICER), _event(2, _invoicer(2))])
    assert found[0].signature_id == found[1].signature_id
    assert found[1].tier == "fingerprint"


def test_closures_of_two_methods_stay_two() -> None:
    other = INVOICER.replace("$anonfun$render$1", "$anonfun$total$1")
    found = GroupingEngine().assign_all([_event(1, INVOICER), _event(2, other)])
    assert found[0].signature_id != found[1].signature_id


def test_two_anonymous_classes_of_one_class_stay_two() -> None:
    """javac numbers anonymous classes in source order too, but `Parser$1.run` and `Parser$3.run` of one
    build are two classes whose frames differ by nothing else (the line never enters the hash): it is kept."""

    def runnable(number: int) -> str:
        return (
            'java.lang.NullPointerException: Cannot invoke "String.trim()" because "name" is null\n'
            f"\tat com.acme.ingest.Parser${number}.run(Parser.java:77)\n"
            "\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)\n"
            "\tat java.base/java.lang.Thread.run(Thread.java:840)\n"
        )

    first, third = (parse_stacktrace(runnable(n)) for n in (1, 3))
    assert first is not None and third is not None
    assert first.exceptions[0].frames[0].module == "com.acme.ingest.Parser$1"
    assert not first.notes and as_read_before(first) is None
    found = GroupingEngine().assign_all([_event(1, runnable(1), "ingest"), _event(2, runnable(3), "ingest")])
    assert found[0].signature_id != found[1].signature_id


def test_the_previous_reading_names_the_frames_as_printed() -> None:
    trace = parse_stacktrace(INVOICER)
    assert trace is not None
    (exception,) = trace.exceptions
    frames = list(exception.frames)
    frames[1] = replace(frames[1], function="$anonfun$render$1")
    frames[2] = replace(frames[2], function="$anonfun$render$1$adapted")
    assert as_read_before(trace) == ParsedTrace("java", (replace(exception, frames=tuple(frames)),))
    assert as_read_before(parse_stacktrace(_invoicer(2)) or trace) != as_read_before(trace)


def test_a_caused_by_closure_is_named_as_printed_in_its_own_exception() -> None:
    text = (
        "java.lang.RuntimeException: render failed\n"
        "\tat com.acme.billing.Main$.main(Main.scala:14)\n"
        "\tat com.acme.billing.Main.main(Main.scala)\n"
        f"Caused by: java.util.NoSuchElementException: {MESSAGE}\n"
        "\tat scala.collection.immutable.Map$Map1.apply(Map.scala:245)\n"
        "\tat com.acme.billing.Invoicer.$anonfun$render$4(Invoicer.scala:51)\n"
        "\t... 2 more\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert trace.exceptions[1].frames[1].function == "$anonfun$render$<n>"
    before = as_read_before(trace)
    assert before is not None and not before.notes
    assert before.exceptions[1].frames[1].function == "$anonfun$render$4"
    assert before.exceptions[0] == trace.exceptions[0]


def test_a_trace_without_closures_reads_as_before() -> None:
    text = INVOICER.replace("$anonfun$render$1", "renderLine")
    trace = parse_stacktrace(text)
    assert trace is not None and not trace.notes and as_read_before(trace) is None


def test_without_a_signature_before_the_trace_starts_one_of_its_own() -> None:
    """This version's hashes are not those pinned: a signature the previous release made is found by the
    previous reading's alone (below)."""
    found = GroupingEngine().assign_all([_event(1, INVOICER), _event(2, INVOICER)])
    assert found[0].signature_id == found[1].signature_id and found[0].tier == "new"
    assert found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_trace(how: str) -> None:
    engine = engine_knowing(
        "sig_before",
        service="billing",
        title="NoSuchElementException: key not found: user-<int>",
        hashes=PREVIOUS_RELEASE_HASHES,
        how=how,
    )
    found = engine.assign_all([_event(1, INVOICER), _event(2, INVOICER)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)
    registered = engine.state("sig_before").hashes
    assert set(PREVIOUS_RELEASE_HASHES) < set(registered)
    assert found[0].fingerprint_hash in registered
    # and a later build, its closures renumbered, finds it by this version's hashes
    later = engine.assign(_event(3, _invoicer(2)))
    assert (later.signature_id, later.tier) == ("sig_before", "fingerprint")
