"""Settings: defaults, environment names, every invalid value reported at once, the docs/settings.md table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rounds_bot.errors import ConfigError
from rounds_bot.settings import Settings, env_name, load_settings
from rounds_bot.settings.grouping import GroupingConfig

SETTINGS_DOC = Path(__file__).resolve().parent.parent / "docs" / "settings.md"


def test_defaults_need_no_environment(clean_env):
    settings = load_settings()
    assert settings.signatures_db_path == Path("rounds.db")
    assert settings.tracker == "dry-run"
    assert settings.effective_source() is None


def test_original_design_names_are_kept(clean_env):
    clean_env.setenv("SIGNOZ_API_URL", "http://localhost:8080/")
    clean_env.setenv("SIGNOZ_API_KEY", "k")
    clean_env.setenv("POLL_INTERVAL_SECONDS", "600")
    clean_env.setenv("ERROR_LOOKBACK_MINUTES", "30")
    clean_env.setenv("CLAUDE_MODEL", "haiku")
    clean_env.setenv("CLAUDE_MAX_BUDGET_USD", "0.25")
    clean_env.setenv("SIGNATURES_DB_PATH", "/var/lib/rounds/sig.db")
    settings = load_settings()
    assert settings.signoz_api_url == "http://localhost:8080"
    assert settings.poll_interval_seconds == 600
    assert settings.error_lookback_minutes == 30
    assert settings.claude_model == "haiku"
    assert settings.claude_max_budget_usd == 0.25
    assert settings.signatures_db_path == Path("/var/lib/rounds/sig.db")
    assert settings.effective_source() == "signoz"


def test_every_invalid_value_is_reported_together_with_its_variable(clean_env):
    clean_env.setenv("POLL_INTERVAL_SECONDS", "often")
    clean_env.setenv("CLAUDE_MAX_BUDGET_USD", "-1")
    clean_env.setenv("ROUNDS_TRACKER", "jira")
    clean_env.setenv("SIGNOZ_API_URL", "localhost:8080")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("4 invalid settings")
    for name in ("POLL_INTERVAL_SECONDS", "CLAUDE_MAX_BUDGET_USD", "ROUNDS_TRACKER", "SIGNOZ_API_URL"):
        assert name in message
    assert "'dry-run' or 'github'" in message
    assert "http://localhost:8080" in message


def test_comma_lists_and_error_code_pattern(clean_env):
    clean_env.setenv("ROUNDS_IN_APP_INCLUDE", "myapp., /srv/app/ ,")
    clean_env.setenv("ROUNDS_ERROR_CODE_PATTERN", r"\b(E\d{4})\b")
    settings = load_settings()
    assert settings.in_app_include == ["myapp.", "/srv/app/"]
    assert settings.error_code_pattern == r"\b(E\d{4})\b"


def test_pattern_without_a_group_is_refused(clean_env):
    clean_env.setenv("ROUNDS_ERROR_CODE_PATTERN", r"E\d{4}")
    with pytest.raises(ConfigError, match=r"ROUNDS_ERROR_CODE_PATTERN.*capturing group"):
        load_settings()


def test_env_file_is_read_and_a_missing_one_is_an_error(clean_env, tmp_path):
    env_file = tmp_path / "rounds.env"
    env_file.write_text("ERROR_LOOKBACK_MINUTES=15\n")
    assert load_settings(env_file).error_lookback_minutes == 15
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "absent.env")


def test_secrets_are_not_printed(clean_env):
    clean_env.setenv("GITHUB_TOKEN", "ghp_supersecret")
    assert "ghp_supersecret" not in repr(load_settings())


def test_every_setting_is_documented_in_the_settings_doc():
    table = SETTINGS_DOC.read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", table, flags=re.MULTILINE))
    declared = {env_name(name) for name in Settings.model_fields}
    assert declared <= documented, f"undocumented: {sorted(declared - documented)}"
    assert documented <= declared, f"documented but not settings: {sorted(documented - declared)}"


def test_an_openai_diagnoser_needs_its_endpoint(clean_env):
    clean_env.setenv("ROUNDS_DIAGNOSER", "openai")
    with pytest.raises(ConfigError, match="ROUNDS_OPENAI_BASE_URL"):
        load_settings()
    clean_env.setenv("ROUNDS_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    clean_env.setenv("ROUNDS_OPENAI_MODEL", "qwen")
    assert load_settings().diagnoser == "openai"


def test_grouping_thresholds_default_to_the_engines_and_the_doc_shows_them(clean_env):
    settings = load_settings()
    engine_defaults = GroupingConfig()
    assert settings.merge_threshold == engine_defaults.merge_threshold == 0.6
    assert settings.related_threshold == engine_defaults.related_threshold == 0.4
    table = SETTINGS_DOC.read_text(encoding="utf-8")
    assert "| `ROUNDS_MERGE_THRESHOLD` | `0.6` |" in table
    assert "| `ROUNDS_RELATED_THRESHOLD` | `0.4` |" in table


def test_a_related_threshold_above_the_merge_threshold_is_refused_with_the_others(clean_env):
    clean_env.setenv("ROUNDS_MERGE_THRESHOLD", "0.5")
    clean_env.setenv("ROUNDS_RELATED_THRESHOLD", "0.7")
    clean_env.setenv("ROUNDS_TRACKER", "jira")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("2 invalid settings")
    assert "ROUNDS_RELATED_THRESHOLD='0.7': above ROUNDS_MERGE_THRESHOLD=0.5" in message
    assert "ROUNDS_TRACKER" in message


def test_overrides_are_named_by_field_and_win_over_the_environment(clean_env, tmp_path):
    clean_env.setenv("ROUNDS_MERGE_THRESHOLD", "0.9")
    settings = load_settings(signatures_db_path=tmp_path / "r.db", merge_threshold=0.7)
    assert settings.signatures_db_path == tmp_path / "r.db"
    assert settings.merge_threshold == 0.7
    assert settings.grouping_config().merge_threshold == 0.7


def test_an_override_that_names_no_field_is_refused(clean_env):
    with pytest.raises(ConfigError, match="no such setting: ROUNDS_MERGE_THRESHOLD, db_path"):
        load_settings(db_path="x.db", ROUNDS_MERGE_THRESHOLD=0.7)
