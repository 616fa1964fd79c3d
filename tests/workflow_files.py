"""Files of the local workflow runner: workflow files as GitHub reads them, and the files it gives each step.

workflow = load(Path(".github/workflows/rounds.yml"))   # or parse(text); `on` is a key, not True
files = StepFiles.create(folder, "round-3")              # GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, summary
run the step with files.variables() in its environment
written = files.read()                                   # outputs, env and PATH additions, summary
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


def load(path: Path) -> dict[str, Any]:
    return parse(path.read_text(encoding="utf-8"))


def parse(text: str) -> dict[str, Any]:
    workflow = yaml.safe_load(text)
    # YAML 1.1 reads the key `on` as True
    if True in workflow:
        workflow["on"] = workflow.pop(True)
    return dict(workflow)


@dataclass(frozen=True)
class Written:
    """What a step wrote to its files."""

    outputs: dict[str, str]
    env: dict[str, str]
    path: list[str]
    summary: str
    # GitHub refused the step's summary file as larger than it takes (`SUMMARY_LIMIT`): none of it shows
    summary_refused: bool = False


#: GitHub uploads a step's summary file when the step ends and aborts the upload of one over 1 MiB, so the run
#: page shows none of it ("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k";
#: GitHub Docs, "Workflow commands for GitHub Actions", "Adding a job summary": "each step is restricted to a
#: maximum size of 1MiB")
SUMMARY_LIMIT = 1024 * 1024


@dataclass(frozen=True)
class StepFiles:
    """The files the runner gives one step: outputs, environment and PATH additions, summary."""

    output: Path
    env: Path
    path: Path
    summary: Path

    @classmethod
    def create(cls, folder: Path, stem: str) -> StepFiles:
        files = cls(*(folder / f"{stem}.{kind}" for kind in ("output", "env", "path", "summary.md")))
        for path in (files.output, files.env, files.path):
            path.write_text("", encoding="utf-8")
        return files

    def variables(self) -> dict[str, str]:
        return {
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_ENV": str(self.env),
            "GITHUB_PATH": str(self.path),
            "GITHUB_STEP_SUMMARY": str(self.summary),
        }

    def read(self) -> Written:
        summary = self.summary.read_text(encoding="utf-8") if self.summary.exists() else ""
        refused = len(summary.encode("utf-8")) > SUMMARY_LIMIT
        return Written(
            outputs=read_key_values(self.output.read_text(encoding="utf-8")),
            env=read_key_values(self.env.read_text(encoding="utf-8")),
            path=[line for line in self.path.read_text(encoding="utf-8").splitlines() if line],
            summary="" if refused else summary,
            summary_refused=refused,
        )


def read_key_values(text: str) -> dict[str, str]:
    """`name=value` lines and `name<<DELIMITER` ... `DELIMITER` blocks; a later value wins."""
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            values[key] = "\n".join(block)
        elif "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
    return values
