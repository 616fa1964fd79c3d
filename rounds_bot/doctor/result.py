"""What a doctor check finds: a `Check` (area, status, detail, what to do), and all of them as a
`DoctorResult` rendered for the terminal and the job summary."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rounds_bot.models import Frozen

Status = Literal["ok", "warn", "fix", "off"]


class Check(Frozen):
    area: str
    status: Status
    detail: str
    fix: str | None = Field(default=None, description="what to do, for `warn` and `fix`")


class DoctorResult(Frozen):
    checks: list[Check] = Field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fix"]

    def render(self) -> str:
        marks = {"ok": "ok  ", "warn": "warn", "fix": "FIX ", "off": "off "}
        lines = []
        for check in self.checks:
            lines.append(f"{marks[check.status]}  {check.area}: {check.detail}")
            if check.fix:
                lines.append(f"      -> {check.fix}")
        count = len(self.problems)
        lines.append("")
        lines.append("nothing to fix" if count == 0 else f"{count} thing{'s' if count > 1 else ''} to fix")
        return "\n".join(lines)
