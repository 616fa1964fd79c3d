"""inventory-service: a Java 21 Spring Boot 3.3 service (OpenTelemetry Java agent 2.10)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from opentelemetry._logs import SeverityNumber
from opentelemetry.trace import SpanKind

from tools.demo.fleet import STAGING, instance
from tools.demo.plan import (
    NS_PER_S,
    Instance,
    LogPlan,
    Occurrence,
    Scope,
    SpanPlan,
    error_status,
    exception_event,
    instant,
    millis,
)
from tools.demo.scenarios.common import Scenario, Traffic, db_span, http_server_span, pick
from tools.demo.stacktraces import JavaException, JavaFrame, java_stack_trace, jdk

SERVICE = "inventory-service"
AGENT_VERSION = "2.10.0-alpha"
TOMCAT = Scope("io.opentelemetry.tomcat-10.0", AGENT_VERSION)
SCHEDULING = Scope("io.opentelemetry.spring-scheduling-3.1", AGENT_VERSION)
JDBC = Scope("io.opentelemetry.jdbc", AGENT_VERSION)
WAREHOUSES = ("WH-BER-2", "WH-HAM-1", "WH-MUC-3", "WH-FRA-1", "WH-LEJ-4")

#: Application line numbers per version: 5.12.1 moved code around in these classes.
LINES = {
    "5.12.0": {
        "service.reserve.decrement": 88,
        "service.reserve.route": 71,
        "controller.reserve": 54,
        "job.applyLine": 131,
        "job.run": 97,
        "router.nearest": 73,
        "router.route": 48,
        "planner.planFor": 112,
        "planner.run": 64,
    },
    "5.12.1": {
        "service.reserve.decrement": 93,
        "service.reserve.route": 74,
        "controller.reserve": 56,
        "job.applyLine": 134,
        "job.run": 99,
        "router.nearest": 79,
        "router.route": 51,
        "planner.planFor": 118,
        "planner.run": 66,
    },
}


def _frame(method: str, location: str) -> JavaFrame:
    return JavaFrame(method, location)


def _app(method: str, file: str, line: int) -> JavaFrame:
    return JavaFrame(f"com.acme.inventory.{method}", f"{file}:{line}")


_WEB_TAIL = (
    jdk("jdk.internal.reflect.DirectMethodHandleAccessor.invoke", "DirectMethodHandleAccessor.java:103"),
    jdk("java.lang.reflect.Method.invoke", "Method.java:580"),
    _frame(
        "org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter.invokeHandlerMethod",
        "RequestMappingHandlerAdapter.java:926",
    ),
    _frame("org.springframework.web.servlet.DispatcherServlet.doDispatch", "DispatcherServlet.java:1089"),
    _frame("jakarta.servlet.http.HttpServlet.service", "HttpServlet.java:590"),
    _frame("org.apache.coyote.http11.Http11Processor.service", "Http11Processor.java:397"),
    _frame("org.apache.tomcat.util.threads.ThreadPoolExecutor$Worker.run", "ThreadPoolExecutor.java:659"),
    jdk("java.lang.Thread.run", "Thread.java:1583"),
)

_SCHEDULER_TAIL = (
    jdk("jdk.internal.reflect.DirectMethodHandleAccessor.invoke", "DirectMethodHandleAccessor.java:103"),
    jdk("java.lang.reflect.Method.invoke", "Method.java:580"),
    _frame(
        "org.springframework.scheduling.support.ScheduledMethodRunnable.runInternal",
        "ScheduledMethodRunnable.java:130",
    ),
    _frame(
        "org.springframework.scheduling.support.ScheduledMethodRunnable.run",
        "ScheduledMethodRunnable.java:124",
    ),
    jdk("java.util.concurrent.FutureTask.runAndReset", "FutureTask.java:358"),
    jdk(
        "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask.run",
        "ScheduledThreadPoolExecutor.java:305",
    ),
    jdk("java.util.concurrent.ThreadPoolExecutor.runWorker", "ThreadPoolExecutor.java:1144"),
    jdk("java.util.concurrent.ThreadPoolExecutor$Worker.run", "ThreadPoolExecutor.java:642"),
    jdk("java.lang.Thread.run", "Thread.java:1583"),
)


def _reservation_callers(lines: dict[str, int], service_line: str) -> tuple[JavaFrame, ...]:
    return (
        _app("reservation.ReservationService.reserve", "ReservationService.java", lines[service_line]),
        _frame("com.acme.inventory.reservation.ReservationService$$SpringCGLIB$$0.reserve", "<generated>"),
        _app(
            "reservation.ReservationController.reserve",
            "ReservationController.java",
            lines["controller.reserve"],
        ),
        *_WEB_TAIL,
    )


def _reserve_span(rng: random.Random, time_ns: int, sku: int, warehouse: str, status_code: int) -> SpanPlan:
    return http_server_span(
        TOMCAT,
        "POST",
        "/api/reservations",
        "/api/reservations",
        status_code,
        time_ns,
        millis(rng, 12, 80),
        **{"app.sku.id": sku, "app.warehouse.code": warehouse},
    )


def _job_span(rng: random.Random, time_ns: int, job: str) -> SpanPlan:
    return SpanPlan(
        f"{job}.run",
        SpanKind.INTERNAL,
        SCHEDULING,
        time_ns,
        time_ns + millis(rng, 200, 1500),
        attributes={"code.function.name": f"com.acme.inventory.{job}.run", "job.system": "spring_scheduling"},
    )


def _fail(span: SpanPlan, rng: random.Random, exception_type: str, message: str, trace: str) -> SpanPlan:
    span.events.append(exception_event(span.end_ns - millis(rng, 0.2, 1), exception_type, message, trace))
    # The Java agent marks the span as failed without a description; the event has the detail.
    span.status = error_status(None)
    span.carries_error = True
    return span


# --- inventory-stock-check-constraint ---------------------------------------------------------

_UPDATE_STOCK = "update stock_levels set quantity=?,updated_at=? where sku_id=? and warehouse_code=?"

_COMMIT_FRAMES = (
    _frame(
        "org.springframework.orm.jpa.vendor.HibernateJpaDialect.convertHibernateAccessException",
        "HibernateJpaDialect.java:290",
    ),
    _frame(
        "org.springframework.orm.jpa.vendor.HibernateJpaDialect.translateExceptionIfPossible",
        "HibernateJpaDialect.java:241",
    ),
    _frame("org.springframework.orm.jpa.JpaTransactionManager.doCommit", "JpaTransactionManager.java:566"),
    _frame(
        "org.springframework.transaction.support.AbstractPlatformTransactionManager.processCommit",
        "AbstractPlatformTransactionManager.java:795",
    ),
    _frame(
        "org.springframework.transaction.interceptor.TransactionAspectSupport.invokeWithinTransaction",
        "TransactionAspectSupport.java:426",
    ),
    _frame(
        "org.springframework.aop.framework.CglibAopProxy$DynamicAdvisedInterceptor.intercept",
        "CglibAopProxy.java:720",
    ),
    _frame("com.acme.inventory.stock.StockLedger$$SpringCGLIB$$0.decrement", "<generated>"),
)

_HIBERNATE_FRAMES = (
    _frame(
        "org.hibernate.exception.internal.SQLStateConversionDelegate.convert",
        "SQLStateConversionDelegate.java:95",
    ),
    _frame("org.hibernate.engine.jdbc.spi.SqlExceptionHelper.convert", "SqlExceptionHelper.java:108"),
    _frame(
        "org.hibernate.engine.jdbc.internal.ResultSetReturnImpl.executeUpdate", "ResultSetReturnImpl.java:197"
    ),
    _frame(
        "org.hibernate.engine.jdbc.mutation.internal.AbstractMutationExecutor.performNonBatchedMutation",
        "AbstractMutationExecutor.java:108",
    ),
    _frame("org.hibernate.internal.SessionImpl.doFlush", "SessionImpl.java:1425"),
    _frame("org.springframework.orm.jpa.JpaTransactionManager.doCommit", "JpaTransactionManager.java:562"),
)

_DRIVER_FRAMES = (
    _frame("org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse", "QueryExecutorImpl.java:2733"),
    _frame("org.postgresql.core.v3.QueryExecutorImpl.execute", "QueryExecutorImpl.java:372"),
    _frame("org.postgresql.jdbc.PgStatement.executeInternal", "PgStatement.java:517"),
    _frame("org.postgresql.jdbc.PgPreparedStatement.executeUpdate", "PgPreparedStatement.java:155"),
    _frame(
        "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeUpdate",
        "HikariProxyPreparedStatement.java",
    ),
    _frame(
        "org.hibernate.engine.jdbc.internal.ResultSetReturnImpl.executeUpdate", "ResultSetReturnImpl.java:194"
    ),
)


def _stock_check_constraint(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    lines = LINES[where.version]
    sku = rng.randrange(10_000, 99_999)
    warehouse = pick(rng, WAREHOUSES)
    row_time = datetime.fromtimestamp(time_ns / NS_PER_S, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    database_error = (
        'ERROR: new row for relation "stock_levels" violates check constraint "stock_levels_quantity_check"\n'
        f"  Detail: Failing row contains ({sku}, {warehouse}, {-rng.randrange(1, 6)}, {row_time}+00)."
    )
    from_reservation = rng.random() < 0.75
    if from_reservation:
        callers = _reservation_callers(lines, "service.reserve.decrement")
    else:
        callers = (
            _app("adjustments.BulkAdjustmentJob.applyLine", "BulkAdjustmentJob.java", lines["job.applyLine"]),
            _app("adjustments.BulkAdjustmentJob.run", "BulkAdjustmentJob.java", lines["job.run"]),
            *_SCHEDULER_TAIL,
        )
    top_frames = (*_COMMIT_FRAMES, *callers)
    hibernate_frames = (*_HIBERNATE_FRAMES, *top_frames[3:])
    driver_frames = (*_DRIVER_FRAMES, *hibernate_frames[3:])
    statement = f"could not execute statement [{database_error}] [{_UPDATE_STOCK}]"
    message = f"{statement}; SQL [{_UPDATE_STOCK}]; constraint [stock_levels_quantity_check]"
    exception_type = "org.springframework.dao.DataIntegrityViolationException"
    trace = java_stack_trace(
        JavaException(f"{exception_type}: {message}", top_frames),
        JavaException(f"org.hibernate.exception.ConstraintViolationException: {statement}", hibernate_frames),
        JavaException(f"org.postgresql.util.PSQLException: {database_error}", driver_frames),
    )
    if from_reservation:
        span = _reserve_span(rng, time_ns, sku, warehouse, 500)
    else:
        span = _job_span(rng, time_ns, "adjustments.BulkAdjustmentJob")
    return Occurrence(time_ns, where, root=_fail(span, rng, exception_type, message, trace))


# --- inventory-unknown-warehouse-npe ----------------------------------------------------------


def _unknown_warehouse_npe(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    lines = LINES[where.version]
    router = (
        _app("routing.FulfilmentRouter.nearestWarehouse", "FulfilmentRouter.java", lines["router.nearest"]),
        _app("routing.FulfilmentRouter.route", "FulfilmentRouter.java", lines["router.route"]),
    )
    sku = rng.randrange(10_000, 99_999)
    if rng.random() < 0.6:
        frames = (*router, *_reservation_callers(lines, "service.reserve.route"))
        span = _reserve_span(rng, time_ns, sku, "WH-DUS-1", 500)
    else:
        frames = (
            *router,
            _app("restock.RestockPlanner.planFor", "RestockPlanner.java", lines["planner.planFor"]),
            jdk("java.util.stream.ReferencePipeline$3$1.accept", "ReferencePipeline.java:197"),
            jdk("java.util.ArrayList$ArrayListSpliterator.forEachRemaining", "ArrayList.java:1708"),
            jdk("java.util.stream.AbstractPipeline.copyInto", "AbstractPipeline.java:509"),
            jdk("java.util.stream.ReferencePipeline.collect", "ReferencePipeline.java:682"),
            _app("restock.RestockPlanner.run", "RestockPlanner.java", lines["planner.run"]),
            *_SCHEDULER_TAIL,
        )
        span = _job_span(rng, time_ns, "restock.RestockPlanner")
    message = (
        'Cannot invoke "com.acme.inventory.warehouse.Warehouse.region()" because the return value of '
        '"com.acme.inventory.warehouse.WarehouseRegistry.find(String)" is null'
    )
    exception_type = "java.lang.NullPointerException"
    trace = java_stack_trace(JavaException(f"{exception_type}: {message}", frames))
    return Occurrence(time_ns, where, root=_fail(span, rng, exception_type, message, trace))


# --- inventory-startup-config-bind ------------------------------------------------------------

_STARTUP_FRAMES = (
    _frame("org.springframework.boot.context.properties.bind.Binder.handleBindError", "Binder.java:392"),
    _frame("org.springframework.boot.context.properties.bind.Binder.bind", "Binder.java:352"),
    _frame("org.springframework.boot.context.properties.bind.Binder.bind", "Binder.java:337"),
    _frame(
        "org.springframework.boot.context.properties.ConfigurationPropertiesBinder.bind",
        "ConfigurationPropertiesBinder.java:100",
    ),
    _frame(
        "org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.initializeBean",
        "AbstractAutowireCapableBeanFactory.java:1791",
    ),
    _frame(
        "org.springframework.beans.factory.support.DefaultListableBeanFactory.preInstantiateSingletons",
        "DefaultListableBeanFactory.java:975",
    ),
    _frame(
        "org.springframework.context.support.AbstractApplicationContext.refresh",
        "AbstractApplicationContext.java:624",
    ),
    _frame("org.springframework.boot.SpringApplication.refreshContext", "SpringApplication.java:456"),
    _frame("org.springframework.boot.SpringApplication.run", "SpringApplication.java:335"),
    _app("InventoryApplication.main", "InventoryApplication.java", 12),
)


def _startup_config_bind(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns, environment=STAGING)
    conversion_frames = (
        _frame(
            "org.springframework.core.convert.support.ConversionUtils.invokeConverter",
            "ConversionUtils.java:47",
        ),
        _frame(
            "org.springframework.core.convert.support.GenericConversionService.convert",
            "GenericConversionService.java:182",
        ),
        _frame(
            "org.springframework.boot.context.properties.bind.BindConverter.convert", "BindConverter.java:101"
        ),
        _frame("org.springframework.boot.context.properties.bind.Binder.bindProperty", "Binder.java:459"),
        _frame("org.springframework.boot.context.properties.bind.Binder.bind", "Binder.java:350"),
        *_STARTUP_FRAMES[2:],
    )
    parse_frames = (
        _frame("org.springframework.boot.convert.DurationStyle.detect", "DurationStyle.java:164"),
        _frame(
            "org.springframework.boot.convert.StringToDurationConverter.convert",
            "StringToDurationConverter.java:63",
        ),
        _frame(
            "org.springframework.core.convert.support.ConversionUtils.invokeConverter",
            "ConversionUtils.java:41",
        ),
        *conversion_frames[1:],
    )
    message = "Failed to bind properties under 'inventory.cache.ttl' to java.time.Duration"
    exception_type = "org.springframework.boot.context.properties.bind.BindException"
    trace = java_stack_trace(
        JavaException(f"{exception_type}: {message}", _STARTUP_FRAMES),
        JavaException(
            "org.springframework.core.convert.ConversionFailedException: Failed to convert from type "
            "[java.lang.String] to type [java.time.Duration] for value [15 minutes]",
            conversion_frames,
        ),
        JavaException(
            "java.lang.IllegalArgumentException: '15 minutes' is not a valid duration", parse_frames
        ),
    )
    log = LogPlan(
        time_ns,
        SeverityNumber.ERROR,
        "Application run failed",
        Scope("org.springframework.boot.SpringApplication"),
        {
            "thread.name": "main",
            "thread.id": 1,
            "exception.type": exception_type,
            "exception.message": message,
            "exception.stacktrace": trace,
        },
    )
    return Occurrence(time_ns, where, logs=[log])


SCENARIOS = [
    Scenario("inventory-stock-check-constraint", instant, _stock_check_constraint),
    Scenario("inventory-unknown-warehouse-npe", instant, _unknown_warehouse_npe),
    Scenario("inventory-startup-config-bind", lambda rng: instant(rng, 600, 1500), _startup_config_bind),
]


# --- ordinary traffic -------------------------------------------------------------------------


def _reservation(rng: random.Random, time_ns: int) -> Occurrence:
    where: Instance = instance(rng, SERVICE, time_ns)
    sku = rng.randrange(10_000, 99_999)
    warehouse = pick(rng, WAREHOUSES)
    span = _reserve_span(rng, time_ns, sku, warehouse, 201)
    span.children.append(
        db_span(JDBC, "UPDATE", "stock_levels", _UPDATE_STOCK, time_ns + millis(rng, 2, 6), millis(rng, 1, 4))
    )
    span.logs.append(
        LogPlan(
            span.end_ns - millis(rng, 0.5, 2),
            SeverityNumber.INFO,
            f"Reserved {rng.randrange(1, 5)} unit(s) of SKU {sku} in {warehouse}",
            Scope("com.acme.inventory.reservation.ReservationService"),
            {"thread.name": f"http-nio-8080-exec-{rng.randrange(1, 11)}"},
        )
    )
    return Occurrence(time_ns, where, root=span)


def _pool_warning(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    log = LogPlan(
        time_ns,
        SeverityNumber.WARN,
        "HikariPool-1 - Thread starvation or clock leap detected "
        f"(housekeeper delta={rng.randrange(31, 75)}s).",
        Scope("com.zaxxer.hikari.pool.HikariPool"),
        {"thread.name": "HikariPool-1 housekeeper"},
    )
    return Occurrence(time_ns, where, logs=[log])


TRAFFIC = [
    Traffic("inventory reservations", 30, _reservation),
    Traffic("inventory pool warnings", 12, _pool_warning),
]
