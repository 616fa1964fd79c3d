"""The demo's five services: their runtimes, versions, deploys, environments and pods.

Each service runs an old version in production until its deploy time and the new one after;
staging runs the new version all day. The resource attributes are the ones each runtime's
OpenTelemetry SDK (or agent) reports; the Go worker still uses the older
`deployment.environment` key, as services on older semantic conventions do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from tools.demo.plan import BASE_NS, NS_PER_S, Attributes, Instance

PRODUCTION = "production"
STAGING = "staging"
#: share of a service's traffic (and so of its errors) that staging sees
STAGING_SHARE = 0.15


@dataclass(frozen=True)
class Service:
    name: str
    old_version: str
    new_version: str
    deploy_offset_s: int
    production_pods: tuple[str, ...]
    staging_pods: tuple[str, ...]
    runtime_resource: tuple[tuple[str, str], ...]
    environment_key: str = "deployment.environment.name"

    def version_at(self, environment: str, time_ns: int) -> str:
        if environment == STAGING or time_ns >= BASE_NS + self.deploy_offset_s * NS_PER_S:
            return self.new_version
        return self.old_version


_PYTHON_SDK = (
    ("telemetry.sdk.language", "python"),
    ("telemetry.sdk.name", "opentelemetry"),
    ("telemetry.sdk.version", "1.45.2"),
)

SERVICES: dict[str, Service] = {
    service.name: service
    for service in (
        Service(
            name="checkout-api",
            old_version="2.3.0",
            new_version="2.3.1",
            deploy_offset_s=3 * 3600,
            production_pods=(
                "checkout-api-6f8d9c7b54-x2k4q",
                "checkout-api-6f8d9c7b54-p9wzt",
                "checkout-api-6f8d9c7b54-m7hcd",
            ),
            staging_pods=("checkout-api-7b9c6d5f8-qv2lr",),
            runtime_resource=(
                *_PYTHON_SDK,
                ("process.runtime.version", "3.12.7"),
            ),
        ),
        Service(
            name="inventory-service",
            old_version="5.12.0",
            new_version="5.12.1",
            deploy_offset_s=4 * 3600 + 1800,
            production_pods=("inventory-service-8c4f7d6b9-2lmxn", "inventory-service-8c4f7d6b9-hq5rt"),
            staging_pods=("inventory-service-5d8b7c9f4-wj3kz",),
            runtime_resource=(
                ("telemetry.sdk.language", "java"),
                ("telemetry.sdk.name", "opentelemetry"),
                ("telemetry.sdk.version", "1.44.1"),
                ("process.runtime.version", "21.0.5+11-LTS"),
            ),
        ),
        Service(
            name="web-gateway",
            old_version="1.8.2",
            new_version="1.9.0",
            deploy_offset_s=2 * 3600,
            production_pods=(
                "web-gateway-7d5b8f6c9-4vzpk",
                "web-gateway-7d5b8f6c9-bn8sx",
                "web-gateway-7d5b8f6c9-t6mqf",
            ),
            staging_pods=("web-gateway-6c9f8b7d5-rk2jh",),
            runtime_resource=(
                ("telemetry.sdk.language", "nodejs"),
                ("telemetry.sdk.name", "opentelemetry"),
                ("telemetry.sdk.version", "1.28.0"),
                ("process.runtime.version", "20.18.0"),
            ),
        ),
        Service(
            name="shipping-worker",
            old_version="0.14.3",
            new_version="0.15.0",
            deploy_offset_s=5 * 3600,
            production_pods=("shipping-worker-5f7c9d8b6-8kd2p", "shipping-worker-5f7c9d8b6-zx4lw"),
            staging_pods=("shipping-worker-9b6d7f5c8-mq7vn",),
            runtime_resource=(
                ("telemetry.sdk.language", "go"),
                ("telemetry.sdk.name", "opentelemetry"),
                ("telemetry.sdk.version", "1.32.0"),
                ("process.runtime.version", "go1.23.4"),
            ),
            environment_key="deployment.environment",
        ),
        Service(
            name="notification-service",
            old_version="3.0.7",
            new_version="3.0.7",
            deploy_offset_s=0,
            production_pods=("notification-service-6b8d9f7c5-f2n8r",),
            staging_pods=("notification-service-4c7d8b9f6-d5k1m",),
            runtime_resource=(
                *_PYTHON_SDK,
                ("process.runtime.version", "3.11.10"),
            ),
        ),
    )
}


def instance(
    rng: random.Random,
    service_name: str,
    time_ns: int,
    *,
    environment: str | None = None,
    host: str | None = None,
) -> Instance:
    """The pod that served a request at `time_ns`: staging now and then unless told."""
    service = SERVICES[service_name]
    if environment is None:
        environment = STAGING if rng.random() < STAGING_SHARE else PRODUCTION
    if host is None:
        pods = service.staging_pods if environment == STAGING else service.production_pods
        host = pods[rng.randrange(len(pods))]
    return _instance(service_name, service.version_at(environment, time_ns), environment, host)


@cache
def _instance(service_name: str, version: str, environment: str, host: str) -> Instance:
    service = SERVICES[service_name]
    resource: Attributes = {
        "service.name": service.name,
        "service.namespace": "shop",
        "service.version": version,
        service.environment_key: environment,
        "service.instance.id": f"{host}-{version}",
        "host.name": host,
        **dict(service.runtime_resource),
    }
    return Instance(service.name, version, environment, host, resource)
