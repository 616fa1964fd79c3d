"""Reading the settings object: from the environment, an optional `.env` file and named overrides, with every
invalid value and every name that looks like a setting but is none reported at once, each by its variable.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dotenv import dotenv_values
from pydantic import AliasChoices, ValidationError

from rounds_bot.errors import ConfigError
from rounds_bot.settings.model import Settings
from rounds_bot.settings.names import unknown_names


def env_name(field_name: str) -> str:
    """The environment variable that sets a field."""
    alias = Settings.model_fields[field_name].validation_alias
    assert isinstance(alias, AliasChoices)
    return str(alias.choices[0])


def load_settings(env_file: Path | None = None, **overrides: Any) -> Settings:
    """Read settings; report every invalid value at once, each with its variable name, and every name that
    looks like a setting but is none (`settings.names`).

    `overrides` are named by field (`merge_threshold=0.7`) and win over the environment and the file; a name
    that is no field is refused rather than ignored."""
    unknown = sorted(set(overrides) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(
            f"no such setting: {', '.join(unknown)}",
            hint="name overrides by their field in rounds_bot.settings.Settings, e.g. merge_threshold",
        )
    # a field is read from its environment variable only (validation_alias), so overrides are passed as that
    by_variable = {env_name(name): value for name, value in overrides.items()}
    try:
        if env_file is not None and not env_file.is_file():
            raise ConfigError(f"settings file {env_file} does not exist", hint="create it or omit --env-file")
        file_values = _read_env_file(env_file) if env_file is not None else {}
        unknown_settings = unknown_names(setting_names(), os.environ, file_values, str(env_file))
        if unknown_settings:
            count = len(unknown_settings)
            raise ConfigError(
                f"{count} unknown setting{'s' if count > 1 else ''}: " + "; ".join(unknown_settings),
                hint="every setting is listed in docs/settings.md",
            )
        return Settings(_env_file=env_file, **by_variable)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None


def setting_names() -> set[str]:
    """The environment variable of every setting."""
    names: set[str] = set()
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        names.update(str(choice) for choice in choices if isinstance(choice, str))
    return names


def _read_env_file(path: Path) -> dict[str, str | None]:
    """The names and values of a `.env` file, which must be UTF-8 text."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"settings file {path} is not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line}",
            hint="save it as UTF-8",
        ) from None
    return dict(dotenv_values(path, encoding="utf-8"))


def _describe(exc: ValidationError) -> str:
    by_alias = {env_name(name): name for name in Settings.model_fields}
    problems = []
    for error in exc.errors():
        where = str(error["loc"][0]) if error["loc"] else "settings"
        variable = (
            where if where in by_alias else env_name(where) if where in Settings.model_fields else where
        )
        value = error.get("input")
        shown = f"{value!r}" if isinstance(value, str | int | float) else "the value"
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{variable}={shown}: {message}")
    count = len(problems)
    return f"{count} invalid setting{'s' if count > 1 else ''}: " + "; ".join(problems)
