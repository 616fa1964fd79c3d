"""Reliability and safety figures from the proof suite's harness, run for real (takes about a minute).

    python bench/reliability.py

Plants the public corpus (`tests/security_corpus.py`) in every field of real telemetry, runs real rounds
(dry-run drafts, stdout, the job summary, logs, the database and WAL; the fake GitHub's bodies, titles, labels
and comments; the prompts a recording model received), counts every planted secret found in any output and
every hostile payload that renders active or is obeyed; then runs the crash and fault harness (a round's own
steps, and the artifact step between workflow runs) and the fuzzers (`tests/test_security_faults.py`,
`tests/test_security_artifacts.py`, `tests/test_security_fuzz.py`), and names the defects the harness found
that are not fixed yet (its expected failures). The last line is:

    crash_points=<n> fault_kinds=<n> fuzz_examples=<n> secrets_planted=<n> secrets_leaked=<n> injections=<n>
    injections_obeyed=<n> duplicates=<n> lost=<n> answers_tried=<n> answers_live=<n> cuts_tried=<n>
    cuts_live=<n> evidence_tried=<n> evidence_live=<n> commands_tried=<n> commands_live=<n>

with, before it, one line per family of `tests/hostile_answers.py` (hostile model answers through both
diagnosers, a hostile diagnosis cut at 1,600+ positions, invented evidence, look-alike and lazily quoted
commands): `<family>: tried <n>, live <n>`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import pytest  # noqa: E402
from fake_github.fixtures import running_fake  # noqa: E402
from security_corpus import corpus, injections  # noqa: E402
from security_harness import (  # noqa: E402
    PLACES,
    RecordingModel,
    benign_answer,
    dry_run_outputs,
    github_outputs,
    judge,
    leaks,
    now,
    otlp_lines,
    plant_secrets,
    secret_file,
)


class Env:
    """What pytest's monkeypatch does for the environment, for a script."""

    def setenv(self, name: str, value: str) -> None:
        os.environ[name] = value


class Outcomes:
    """A pytest plugin that counts passed and failed tests by file."""

    def __init__(self) -> None:
        self.passed: dict[str, int] = {}
        self.failed: dict[str, int] = {}
        self.known: list[str] = []  # expected failures: defects found and not fixed yet

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        if getattr(report, "wasxfail", None) is not None:
            self.known.append(report.nodeid.split("::")[-1])
            return
        target = self.passed if report.passed else self.failed
        name = report.nodeid.split("::")[0]
        target[name] = target.get(name, 0) + 1


def secrets_by_family(workdir: Path) -> dict[str, tuple[int, int]]:
    """(planted, leaked) for each family of the corpus (its `category`), and `all`."""
    planted = corpus()
    (workdir / "dry").mkdir()
    (workdir / "gh").mkdir()
    telemetry = secret_file(workdir / "telemetry.jsonl", plant_secrets(planted), now())
    leaked = {item.secret for item, _ in leaks(dry_run_outputs(workdir / "dry", telemetry, Env()), planted)}
    for fake in running_fake():
        outputs = github_outputs(fake, workdir / "gh", telemetry, RecordingModel(benign_answer()))
        leaked |= {item.secret for item, _ in leaks(outputs, planted)}
    families: dict[str, tuple[int, int]] = {}
    for item in planted:
        n, k = families.get(item.category, (0, 0))
        families[item.category] = (n + 1, k + (item.secret in leaked))
    families["all"] = (len(planted), sum(k for _, k in families.values()))
    return families


def secrets(workdir: Path) -> tuple[int, int, dict[str, tuple[int, int]]]:
    families = secrets_by_family(workdir)
    planted, leaked = families.pop("all")
    return planted, leaked, families


def hostile(workdir: Path) -> tuple[int, int]:
    payloads = injections()
    items = [(PLACES[(n + s) % len(PLACES)], p, "", None) for n, p in enumerate(payloads) for s in (0, 5, 9)]
    telemetry = workdir / "hostile.jsonl"
    telemetry.write_text(otlp_lines(items, now()), encoding="utf-8")
    (workdir / "hdry").mkdir()
    (workdir / "hgh").mkdir()
    outputs = dry_run_outputs(workdir / "hdry", telemetry, Env())
    live = sum(
        len(judge(name, text))
        for name, text in outputs.texts.items()
        if name.startswith(("draft", "stdout", "job"))
    )
    answer = benign_answer(root_cause=" ".join(payloads), suggested_fix="\n".join(payloads))
    answer["missing_observability"] = payloads
    for fake in running_fake():
        gh = github_outputs(fake, workdir / "hgh", telemetry, RecordingModel(answer))
        live += sum(
            len(judge(name, text))
            for name, text in gh.texts.items()
            if not name.startswith(("prompt", "github database"))
        )
    return len(items) + 3 * len(payloads), live


#: the short names of `answer_families`, in order, for the last line
FAMILY_KEYS = ("answers", "cuts", "evidence", "commands")


def answer_families(workdir: Path) -> dict[str, tuple[int, int]]:
    """The hostile-answer, cut, evidence and command families (`tests/hostile_answers.py`): tried, live."""
    import hostile_answers
    from diagnosis_samples import make_checkout

    checkout = make_checkout(workdir / "answers-repo")
    families = {
        "hostile model answers (both diagnosers)": hostile_answers.answer_family(checkout),
        "diagnosis cut positions": hostile_answers.cut_family(),
        "invented evidence": hostile_answers.evidence_family(checkout),
        "look-alike and lazily quoted commands": hostile_answers.command_family(),
    }
    return {name: (tried, live) for name, (tried, live, _) in families.items()}


def harness() -> tuple[int, int, int, int, list[str], dict[str, int]]:
    import recovery_tally
    import test_round_signoz as signoz
    import test_security_artifacts as artifacts
    import test_security_faults as faults
    import test_security_fuzz as fuzz

    outcomes = Outcomes()
    files = [
        "tests/test_security_faults.py",
        "tests/test_security_artifacts.py",
        "tests/test_security_fuzz.py",
        "tests/test_round_signoz.py",
    ]
    pytest.main(
        ["-q", "-p", "no:cacheprovider", "-p", "no:logging", *[str(ROOT / f) for f in files]],
        plugins=[outcomes],
    )
    broken = sum(
        n
        for name, n in outcomes.failed.items()
        if name.endswith(("test_security_faults.py", "test_security_artifacts.py", "test_round_signoz.py"))
    )
    fuzzed = (
        sum(n for name, n in outcomes.passed.items() if name.endswith("test_security_fuzz.py"))
        * fuzz.EXAMPLES
    )
    # and the creation whose answer is lost; the artifact step's restore and check; each SigNoz request
    crash_points = (
        len(faults.CRASH_POINTS) + 1 + len(artifacts.ARTIFACT_CRASH_POINTS) + signoz.DEMO_ROUND_REQUESTS
    )
    # and a full disk, a source failing mid-read, two rounds at once; an expired or missing artifact;
    # SigNoz failing from one request on
    fault_kinds = len(faults.FAULTS) + 3 + len(artifacts.ARTIFACT_FAULTS) + len(signoz.REQUEST_FAULTS)
    return crash_points, fault_kinds, fuzzed, broken, outcomes.known, dict(recovery_tally.TALLY)


def main() -> None:
    os.environ.setdefault("CI", "")
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        planted, leaked, families = secrets(workdir)
        injected, obeyed = hostile(workdir)
        families = answer_families(workdir)
    crash_points, fault_kinds, fuzzed, broken, known, tally = harness()
    print(f"secrets: {leaked} of {planted} planted values found in an output")
    for family, (n, k) in families.items():
        print(f"  {family}: planted={n} leaked={k}")
    print(f"known defects (expected failures): {len(known)}" + "".join(f"\n  {name}" for name in known))
    print(f"hostile text: {obeyed} live constructs from {injected} payload placements")
    for name, (tried, live) in families.items():
        print(f"{name}: tried {tried}, live {live}")
    print(
        f"recoveries judged: {tally.get('scenarios', 0)} ({broken} failed); occurrences counted twice: "
        f"{tally.get('doubled', 0)}; model calls paid twice: {tally.get('paid_twice', 0)}"
    )
    print(
        f"crash_points={crash_points} fault_kinds={fault_kinds} fuzz_examples={fuzzed} "
        f"secrets_planted={planted} secrets_leaked={leaked} injections={injected} "
        f"injections_obeyed={obeyed} duplicates={tally.get('twins', 0)} lost={tally.get('lost', 0)}"
        + "".join(
            f" {key}_tried={tried} {key}_live={live}"
            for key, (tried, live) in zip(FAMILY_KEYS, families.values(), strict=True)
        )
    )


if __name__ == "__main__":
    main()
