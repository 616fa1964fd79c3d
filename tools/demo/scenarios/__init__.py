"""How each demo service behaves: its bugs (`SCENARIOS`) and its ordinary traffic (`TRAFFIC`)."""

from __future__ import annotations

from tools.demo.scenarios import checkout, gateway, inventory, notification, shipping
from tools.demo.scenarios.common import Scenario, Traffic

_SERVICES = (checkout, inventory, gateway, shipping, notification)

SCENARIOS: dict[str, Scenario] = {
    scenario.bug_id: scenario for module in _SERVICES for scenario in module.SCENARIOS
}
TRAFFIC: list[Traffic] = [traffic for module in _SERVICES for traffic in module.TRAFFIC]

__all__ = ["SCENARIOS", "TRAFFIC", "Scenario", "Traffic"]
