"""Plant the corpus in every field of real telemetry, run real rounds, collect every output, and judge it.

otlp_lines(...)        OTLP/JSON export requests with each value in one of PLACES
dry_run_outputs(...)   `rounds run` (dry-run drafts, stdout, stderr, the job summary, logs, `db status`,
                       the database and its WAL)
github_outputs(...)    a round against the fake GitHub with a recording fake model: titles, bodies,
                       comments, labels, the prompts, the report, the database
leaks(...)             which planted secrets appear anywhere in those outputs (whole, or their core)
active(...)            which hostile constructs would be live on GitHub (mention, reference, HTML, image,
                       link, comment, math, heading, control or bidi character, a command)
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner
from security_corpus import Planted

from rounds_bot.cli.app import main
from rounds_bot.commands.grammar import command_lines
from rounds_bot.diagnosis.budget import ModelPrice
from rounds_bot.diagnosis.openai_compat import OpenAICompatDiagnoser
from rounds_bot.render.markdown import BREAK
from rounds_bot.round.report import render_report

PLACES = (
    "exception.message",
    "exception.stacktrace",
    "exception.type",
    "service.name",
    "deployment.environment",
    "service.version",
    "span.attribute",
    "event.attribute",
    "attribute.key",
    "log.body",
    "log.attribute",
    "status.message",
    "resource.attribute",
)


def _value(value: str | int | list[str]) -> dict[str, Any]:
    if isinstance(value, list):
        return {"arrayValue": {"values": [_value(item) for item in value]}}
    return {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}


def _attrs(pairs: Iterable[tuple[str, str | int | list[str]]]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in pairs]


@dataclass
class _Record:
    service: str = "checkout"
    environment: str = "production"
    version: str = "1.4.2"
    resource: list[tuple[str, str | int | list[str]]] = field(default_factory=list)
    error_type: str = "PaymentError"
    message: str = "payment failed"
    stacktrace: str = (
        'Traceback (most recent call last):\n  File "shop/pay.py", line 7, in charge\nPaymentError'
    )
    span_attrs: list[tuple[str, str | int]] = field(default_factory=list)
    event_attrs: list[tuple[str, str | int]] = field(default_factory=list)
    status: str | None = None
    log: bool = False
    span_name: str = "POST /pay"


def _record(place: str, text: str, key: str = "", number: int | None = None) -> _Record:
    record = _Record()
    where, _, named = place.partition(":")
    if where == "log.line":  # one record of a log stream, as the application wrote it
        record.message, record.log = text, True
    elif where == "span.name":  # a span that failed without a status message: its name is the message
        record.span_name, record.status = text, ""
    elif where == "resource" and named:
        record.resource.append((named, json.loads(text) if text.startswith("[") else text))
    elif where == "span.attribute" and named:
        record.span_attrs.append((named, text))
    elif number is not None:
        record.span_attrs.append((key, number))
    elif key:
        record.span_attrs.append((key, text))
    elif place in ("exception.message", "status.message", "log.body"):
        record.message = f"payment failed: {text}"
        record.status = record.message if place == "status.message" else None
        record.log = place == "log.body"
    elif place == "exception.stacktrace":
        record.stacktrace += f"\n  context: {text}"
    elif place == "exception.type":
        record.error_type = f"PaymentError {text}"
    elif place == "service.name":
        record.service = f"checkout {text}"
    elif place == "deployment.environment":
        record.environment = text
    elif place == "service.version":
        record.version = text
    elif place in ("span.attribute", "log.attribute"):
        record.span_attrs.append(("app.detail", text))
        record.log = place == "log.attribute"
    elif place == "event.attribute":
        record.event_attrs.append(("app.detail", text))
    elif place == "attribute.key":
        record.span_attrs.append((f"app.{text}", "x"))
    else:
        record.resource.append(("host.detail", text))
    return record


def _line(record: _Record, n: int, at: datetime) -> dict[str, Any]:
    nanos = str(int(at.timestamp() * 1e9) + n)
    resource = {
        "attributes": _attrs(
            [
                ("service.name", record.service),
                ("deployment.environment", record.environment),
                ("service.version", record.version),
                *record.resource,
            ]
        )
    }
    if record.log:
        log = {
            "timeUnixNano": nanos,
            "severityNumber": 17,
            "severityText": "ERROR",
            "body": {"stringValue": record.message},
            "attributes": _attrs(record.span_attrs),
        }
        return {"resourceLogs": [{"resource": resource, "scopeLogs": [{"scope": {}, "logRecords": [log]}]}]}
    span: dict[str, Any] = {
        "traceId": hashlib.md5(f"t{n}".encode()).hexdigest(),
        "spanId": hashlib.md5(f"s{n}".encode()).hexdigest()[:16],
        "name": record.span_name,
        "kind": 2,
        "startTimeUnixNano": nanos,
        "endTimeUnixNano": nanos,
        "attributes": _attrs(record.span_attrs),
        "status": {"code": 2, "message": record.status or ""},
    }
    if record.status is None:
        exception = [
            ("exception.type", record.error_type),
            ("exception.message", record.message),
            ("exception.stacktrace", record.stacktrace),
            *record.event_attrs,
        ]
        span["events"] = [{"name": "exception", "timeUnixNano": nanos, "attributes": _attrs(exception)}]
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {"name": "shop"}, "spans": [span]}]}
        ]
    }


def plant_secrets(planted: list[Planted]) -> list[tuple[Planted, str]]:
    """Each value in a place its kind allows, round-robin, so every place holds many values."""
    placed = []
    for n, item in enumerate(planted):
        if item.place:
            place = item.place
        elif item.kind == "records":
            place = "log stream"
        elif item.kind == "opaque":
            place = "secret-named attribute"
        elif item.kind == "number":
            place = "integer attribute"
        else:
            place = PLACES[n % len(PLACES)]
        placed.append((item, place))
    return placed


def otlp_lines(items: list[tuple[str, str, str, int | None]], at: datetime) -> str:
    """`items`: (place, text, key, number); one export request per item."""
    lines = [
        json.dumps(_line(_record(place, text, key, number), n, at))
        for n, (place, text, key, number) in enumerate(items)
    ]
    return "\n".join(lines) + "\n"


def secret_file(path: Path, placed: list[tuple[Planted, str]], at: datetime) -> Path:
    """One export request per value; a `records` value as one log record per line, in order."""
    items: list[tuple[str, str, str, int | None]] = []
    for item, place in placed:
        if item.kind == "records":
            items += [("log.line", line, "", None) for line in item.carrier.splitlines()]
        else:
            items.append(
                (place, item.carrier, item.key, int(item.carrier) if item.kind == "number" else None)
            )
    path.write_text(otlp_lines(items, at), encoding="utf-8")
    return path


# --- running real rounds ---------------------------------------------------------------------------------


@dataclass
class Outputs:
    texts: dict[str, str] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)

    def add_file(self, name: str, path: Path) -> None:
        if path.exists():
            self.blobs[name] = path.read_bytes()
            self.texts[name] = path.read_bytes().decode("utf-8", "replace")


@contextmanager
def captured_logs() -> Iterator[list[str]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Keep(logging.DEBUG)
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


def dry_run_outputs(workdir: Path, telemetry: Path, monkeypatch: Any) -> Outputs:
    """`rounds run` twice (dry-run) over `telemetry`, then `rounds db status`; every output kept."""
    summary = workdir / "summary.md"
    for name, value in {
        "ROUNDS_SOURCE": f"otlp-file:{telemetry}",
        "SIGNATURES_DB_PATH": str(workdir / "rounds.db"),
        "ROUNDS_OUTPUT_DIR": str(workdir / "drafts"),
        "GITHUB_STEP_SUMMARY": str(summary),
        "ERROR_LOOKBACK_MINUTES": "10080",
        "ROUNDS_DIAGNOSER": "off",
    }.items():
        monkeypatch.setenv(name, value)
    outputs = Outputs()
    with captured_logs() as logs:
        for n in range(2):
            result = CliRunner().invoke(main, ["run"], catch_exceptions=False)
            assert result.exit_code == 0, result.stderr
            outputs.texts[f"stdout {n}"] = result.stdout
            outputs.texts[f"stderr {n}"] = result.stderr
        status = CliRunner().invoke(main, ["db", "status"], catch_exceptions=False)
        outputs.texts["db status"] = status.stdout + status.stderr
    outputs.texts["logs"] = "\n".join(logs)
    for draft in sorted((workdir / "drafts").glob("*")):
        outputs.add_file(f"draft {draft.name}", draft)
    outputs.add_file("job summary", summary)
    for suffix in ("", "-wal", "-shm"):
        outputs.add_file(f"database{suffix}", workdir / f"rounds.db{suffix}")
    return outputs


class RecordingModel:
    """An OpenAI-compatible endpoint that records every prompt and answers with `answer`."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.prompts.append(request.content.decode("utf-8"))
        content = json.dumps(self.answer)
        return httpx.Response(
            200,
            json={
                "id": "c1",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 50},
            },
        )

    def diagnoser(self) -> OpenAICompatDiagnoser:
        return OpenAICompatDiagnoser(
            base_url="http://127.0.0.1:9/v1/",
            model="m",
            price=ModelPrice(input=0.1, output=0.1, cache_write=0.1, cache_read=0.1),
            transport=httpx.MockTransport(self),
        )


def benign_answer(**changes: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "classification": "server_bug",
        "root_cause": "the payment client sends a request the provider refuses",
        "evidence": [{"kind": "file", "path": "shop/pay.py", "line": 1, "explanation": "the call"}],
        "suggested_fix": "check the request before sending it",
        "confidence": "medium",
        "missing_observability": ["the provider's answer"],
        "suggested_error_code": "PAYMENT_REFUSED",
    }
    answer.update(changes)
    return answer


def github_outputs(fake: Any, workdir: Path, telemetry: Path, model: RecordingModel) -> Outputs:
    """One round against the fake GitHub, every new signature diagnosed by the recording model."""
    from fake_github.rounds import settings_for, tracker_for

    from rounds_bot.round.run import run_round
    from rounds_bot.sources.otlp_file import OtlpFileSource
    from rounds_bot.store import Store

    (workdir / "repo" / "shop").mkdir(parents=True, exist_ok=True)
    (workdir / "repo" / "shop" / "pay.py").write_text("def charge():\n    raise PaymentError\n")
    settings = settings_for(
        workdir,
        fake,
        ROUNDS_DIAGNOSE_THRESHOLD="1",
        ROUNDS_MAX_NEW_ISSUES_PER_ROUND="1000",
        ROUNDS_ROUND_BUDGET_USD="1000",
        ROUNDS_MONTHLY_BUDGET_USD="1000",
        ROUNDS_REPO_PATH=str(workdir / "repo"),
        ERROR_LOOKBACK_MINUTES="10080",
    )
    store = Store.open(settings.signatures_db_path)
    tracker = tracker_for(fake, Path(settings.signatures_db_path))
    try:
        with captured_logs() as logs:
            report = run_round(
                settings,
                OtlpFileSource(telemetry),
                tracker,
                store,
                diagnoser=model.diagnoser(),
                diagnosis_mode="diagnosis by a recording model",
            )
    finally:
        store.close()
        tracker.journal.close()
    outputs = Outputs()
    outputs.texts["github report"] = render_report(report)
    outputs.texts["github logs"] = "\n".join(logs)
    for issue in fake.issues():
        outputs.texts[f"issue #{issue.number} title"] = issue.title
        outputs.texts[f"issue #{issue.number} body"] = issue.body
        outputs.texts[f"issue #{issue.number} labels"] = "\n".join(issue.labels)
    for comment in fake.repo.comments.values():
        outputs.texts[f"comment {comment.id}"] = comment.body
    for n, prompt in enumerate(model.prompts):
        outputs.texts[f"prompt {n}"] = (
            json.loads(prompt)["messages"][0]["content"] + json.loads(prompt)["messages"][1]["content"]
        )
    for suffix in ("", "-wal"):
        outputs.add_file(f"github database{suffix}", workdir / f"rounds.db{suffix}")
    return outputs


# --- judging -------------------------------------------------------------------------------------------


def _cores(secret: str) -> list[str]:
    """The secret, and for a long one its middle: a tail left behind by a cut is a leak too."""
    forms = {secret, secret.replace(" ", ""), secret.replace("-", "")}
    if len(secret) >= 24:
        middle = len(secret) // 2
        forms.add(secret[middle - 8 : middle + 8])
    return [form for form in forms if len(form) >= 6]


def leaks(outputs: Outputs, planted: Iterable[Planted]) -> list[tuple[Planted, str]]:
    found = []
    for item in planted:
        forms = _cores(item.secret)
        for name, text in outputs.texts.items():
            if any(form in text for form in forms):
                found.append((item, name))
                break
        else:
            encoded = [form.encode() for form in forms]
            for name, blob in outputs.blobs.items():
                if any(form in blob for form in encoded):
                    found.append((item, name))
                    break
    return found


_FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_MARKER = re.compile(r"<!-- rounds:marker v\d+ \{.*?\} -->\s*\Z", re.DOTALL)
_OWN_TAGS = re.compile(r"</?(?:details|summary|sub)>")
_CHECKS = {
    "mention": re.compile(r"(?<![\w\\" + BREAK + r"])@pwn", re.IGNORECASE),
    "reference": re.compile(r"(?:(?<![\w" + BREAK + r"])#|GH-)70\d\d"),
    "html": re.compile(r"(?<!\\)<(?:[a-zA-Z]|!--|!\[CDATA)"),
    "image": re.compile(r"(?<!\\)!(?<!\\!)\[(?:[^\]\\]|\\.)*\]\("),
    "link": re.compile(r"(?<!\\)\]\((?:https?:)?//|(?<!\\)\]\[ref\]|^\[ref\]:", re.MULTILINE),
    "autolink": re.compile(r"https?://evil|www\.evil|(?<!\\)<https?:"),
    "math": re.compile(r"(?<!\\)\$[^$\n]*pwn"),
    "heading or quote": re.compile(r"^ {0,3}(?:#{1,6} |> ?)pwn", re.MULTILINE),
    "control or bidi": re.compile("[\x00-\x08\x0b-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"),
}


def active(markdown: str) -> list[str]:
    """The live constructs in rendered Markdown (our own marker and template tags aside)."""
    if command_lines(markdown):
        return ["command"]
    text = _MARKER.sub("", markdown)
    text = _FENCE.sub("", text)
    text = _CODE_SPAN.sub("", text)
    text = _OWN_TAGS.sub("", text)
    return [name for name, pattern in _CHECKS.items() if pattern.search(text)]


_TITLE_CHECKS = {
    "mention": _CHECKS["mention"],
    "reference": _CHECKS["reference"],
    "code span": re.compile("`"),
    "line break": re.compile("[\n\r]"),
    "control or bidi": _CHECKS["control or bidi"],
}


def title_active(title: str) -> list[str]:
    """An issue title is plain text on GitHub, but pings, references, code spans and bidi still act."""
    return [name for name, pattern in _TITLE_CHECKS.items() if pattern.search(title)]


def judge(name: str, text: str) -> list[str]:
    return title_active(text) if name.endswith("title") else active(text)


def now() -> datetime:
    return datetime.now(UTC) - timedelta(hours=1)
