"""Render the prompts from templates, with telemetry fenced as data.

Templates and standards are looked up first in the repository's `.rounds/prompts/` and
`.rounds/standards/`, then in the copies packaged with rounds. They are rendered in Jinja2's
sandbox: a repository's template can format the context but cannot reach into Python.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from jinja2 import ChoiceLoader, FileSystemLoader, StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from rounds_bot.diagnosis.context import DiagnosisContext, estimate_tokens
from rounds_bot.errors import DiagnosisError
from rounds_bot.models import Frozen

PACKAGED_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
OVERRIDE_DIRECTORY = ".rounds"
SYSTEM_TEMPLATE = "system.md.j2"
USER_TEMPLATE = "diagnose.md.j2"
STANDARDS = ("classification.md", "bug-report.md")


class Prompt(Frozen):
    """A rendered prompt: trusted instructions, and the user turn that carries the data."""

    system: str
    user: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.system) + estimate_tokens(self.user)


def fence(text: object, kind: str = "telemetry", *, source: str = "TELEMETRY") -> str:
    """Wrap untrusted text so the model reads it as data, from `source` (TELEMETRY unless said otherwise).

    The fence id is a hash of the text, so the text cannot contain its own closing line.
    """
    body = str(text)
    fence_id = hashlib.sha256(body.encode()).hexdigest()[:12]
    return f"<<<{source} {fence_id} {kind}\n{body}\n{source} {fence_id}>>>"


class PromptLibrary:
    """Templates and standards, from a repository's overrides or the packaged defaults."""

    def __init__(self, override_root: Path | None = None) -> None:
        self._search = []
        if override_root is not None:
            self._search.append(override_root / OVERRIDE_DIRECTORY)
        self._search.append(PACKAGED_TEMPLATES)
        loaders = [FileSystemLoader(str(root / "prompts")) for root in self._search]
        self._environment = SandboxedEnvironment(
            loader=ChoiceLoader(loaders),
            undefined=StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=False,
            lstrip_blocks=False,
        )
        self._environment.filters["data"] = fence

    @classmethod
    def for_checkout(cls, checkout: Path) -> PromptLibrary:
        return cls(override_root=checkout)

    def standard(self, name: str) -> str:
        for root in self._search:
            path = root / "standards" / name
            if path.is_file():
                return path.read_text(encoding="utf-8").strip()
        raise DiagnosisError(
            f"standard {name!r} was found neither in {OVERRIDE_DIRECTORY}/standards/ nor packaged",
            hint="reinstall rounds, or add the file to .rounds/standards/",
        )

    def render(
        self,
        context: DiagnosisContext,
        *,
        tools: list[str],
        answer_schema: str = "",
    ) -> Prompt:
        variables = {
            "ctx": context,
            "standards": {name: self.standard(name) for name in STANDARDS},
            "tools": tools,
            "trace_tools": any(tool.startswith("mcp__") for tool in tools),
            "answer_schema": answer_schema,
        }
        return Prompt(
            system=self._render(SYSTEM_TEMPLATE, variables),
            user=self._render(USER_TEMPLATE, variables),
        )

    def render_templates(self, system: str, user: str, variables: dict[str, object]) -> Prompt:
        """A system prompt and a user turn from two named templates (a fix proposal's, for one)."""
        return Prompt(system=self._render(system, variables), user=self._render(user, variables))

    def _render(self, name: str, variables: dict[str, object]) -> str:
        try:
            text = self._environment.get_template(name).render(**variables)
        except TemplateError as error:
            raise DiagnosisError(
                f"prompt template {name!r} could not be rendered: {error}",
                hint=f"check {OVERRIDE_DIRECTORY}/prompts/{name} if the repository overrides it",
            ) from error
        return _collapse_blank_lines(text).strip() + "\n"


def _collapse_blank_lines(text: str) -> str:
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() == "" and lines and lines[-1] == "":
            continue
        lines.append(line.rstrip() if line.strip() else "")
    return "\n".join(lines)
