"""notification-service: a Python 3.11 Celery worker that sends order e-mails."""

from __future__ import annotations

import random

from opentelemetry._logs import SeverityNumber
from opentelemetry.trace import SpanKind

from tools.demo.fleet import instance
from tools.demo.plan import LogPlan, Occurrence, Scope, SpanPlan, instant, millis, uuid4
from tools.demo.scenarios.common import Scenario, Traffic, pick

SERVICE = "notification-service"
CELERY = Scope("opentelemetry.instrumentation.celery", "0.54b0")
TASK_LOGGER = Scope("notification.tasks.email")
RELAYS = ("mx1.relay.mailhost.example", "mx2.relay.mailhost.example", "mx3.relay.mailhost.example")


def _task_span(rng: random.Random, time_ns: int, task: str) -> SpanPlan:
    # Celery's instrumentation names a worker span `run/<task name>`.
    return SpanPlan(
        f"run/{task}",
        SpanKind.CONSUMER,
        CELERY,
        time_ns,
        time_ns + millis(rng, 40, 400),
        attributes={
            "celery.action": "run",
            "celery.state": "SUCCESS",
            "celery.task_name": task,
        },
    )


def _smtp_421(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    relay = pick(rng, RELAYS)
    customer = rng.randrange(10_000, 99_999)
    message_id = f"<{uuid4(rng)}@notify.shop.example>"
    span = _task_span(rng, time_ns, "notification.tasks.send_order_email")
    span.logs.append(
        LogPlan(
            span.end_ns - millis(rng, 0.5, 2),
            SeverityNumber.ERROR,
            f"Delivery of message {message_id} to customer {customer} failed: "
            f"(421, b'4.7.0 {relay} Service not available, closing transmission channel')",
            TASK_LOGGER,
            {"error.code": "SMTP_421", "smtp.relay": relay, "app.customer.id": customer},
        )
    )
    return Occurrence(time_ns, where, root=span)


SCENARIOS = [Scenario("notification-smtp-421", instant, _smtp_421)]


def _email_sent(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    span = _task_span(rng, time_ns, "notification.tasks.send_order_email")
    span.logs.append(
        LogPlan(
            span.end_ns - millis(rng, 0.5, 2),
            SeverityNumber.INFO,
            f"Sent order confirmation <{uuid4(rng)}@notify.shop.example> "
            f"to customer {rng.randrange(10_000, 99_999)}",
            TASK_LOGGER,
        )
    )
    return Occurrence(time_ns, where, root=span)


def _retry_notice(rng: random.Random, time_ns: int) -> Occurrence:
    # INFO, though it mentions an error: severity decides, not wording.
    where = instance(rng, SERVICE, time_ns)
    body = (
        f"Task notification.tasks.send_order_email[{uuid4(rng)}] retry: "
        "Retry in 30s: SMTPServerDisconnected error"
    )
    log = LogPlan(time_ns, SeverityNumber.INFO, body, Scope("celery.app.trace"))
    return Occurrence(time_ns, where, logs=[log])


TRAFFIC = [
    Traffic("notification e-mails sent", 30, _email_sent),
    Traffic("notification retry notices", 15, _retry_notice),
]
