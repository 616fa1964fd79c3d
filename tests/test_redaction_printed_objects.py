"""Secrets as programs print their own objects and configurations, and the look-alikes that stay."""

from __future__ import annotations

import pytest

from rounds_bot.redact.text import redact_text

PASSWORD = "Xk9vQ2mT7rLp4wZs8NbY3cFh"
TOKEN = "tK8pR2vN5xQ9mW3zL7bY4cJ6dF1gH0sA"
HEX = "9f3b2c7d1e8a4f6b0c5d2e9a7b3f1c8d"

LEAKS = {
    "rust_debug_option": (f'Config {{ password: Some("{PASSWORD}"), user: "x" }}', PASSWORD),
    "ecs_value_before_name": (f'{{"value": "{PASSWORD}", "name": "DB_PASSWORD"}}', PASSWORD),
    "plural_name_list": (f"api_keys = ['{TOKEN}', '{TOKEN[::-1]}']", TOKEN),
    "annotated_bytes": (f"password: bytes = '{PASSWORD}'", PASSWORD),
    "rails_message_encryptor": (f"ActiveSupport::MessageEncryptor.new(['{HEX}{HEX}'].pack('H*'))", HEX),
    "laravel_app_key_alone": (
        "base64:Jx8Vq2mT7rLp4wZs8NbY3cFhK9vQ2mT7rLp4wZs8NbY=",
        "Jx8Vq2mT7rLp4wZs8NbY3cFh",
    ),
    "twilio_positional_token": (f"client = Client('AC{HEX}', '{HEX[::-1]}')", HEX[::-1]),
    "pgpass_line": (f"db.internal:5432:app:appuser:{PASSWORD}", PASSWORD),
    "pgpass_wildcards": (f"*:*:*:postgres:{PASSWORD}", PASSWORD),
    # a value with a colon in it is no Go struct's next field: only `%+v` inside its braces prints one
    "yaml_value_with_colon": ("  REDIS_PASSWORD: Xk9vQ2mT:7rLp4wZs8NbY3cFh", "7rLp4wZs8NbY3cFh"),
    "user_colon_password": (f"  Credentials: Admin:{PASSWORD}", PASSWORD),
    "yaml_block_value_with_colon": ("environment:\n  DB_PASSWORD: Summer:2024", "Summer"),
    "logfmt_spaced_name_value_with_colon": ("ts=2024 level=info DB Password: Hunter2:xyz", "Hunter2"),
    "go_struct_field_password_with_colon": (
        "{Host:db User:admin Password: Xk9vQ2mT:7rLp4wZs8NbY3cFh}",
        "7rLp4wZs8NbY3cFh",
    ),
    "go_struct_next_field_password_shaped": (
        f"{{User:admin Password: Port:5432 Token: Secret:{PASSWORD}}}",
        PASSWORD,
    ),
    "go_struct_password_like_next_field": ("{User:admin Password: S3cr3t:Pa55 Port:5432}", "Pa55"),
    "go_struct_numbered_word_next_field": ("{User:admin Password: Tr0ub4dor:3 Port:5432}", "Tr0ub4dor"),
    # a password followed by a bracket is no call or look-up unless the whole of it is code
    "password_before_parenthesis": ("password=hunter2(x)", "hunter2"),
    "password_with_parenthesised_digits": ("Password=Welcome(2024);", "Welcome"),
    "password_with_parenthesis_in_query": ("password=Summer(2024)&ssl=true", "Summer"),
    "password_with_unclosed_brackets": ("password=aB3(dE5[fG7h", "aB3"),
    "token_before_truncation_mark": ("token=Summer2024[truncated]", "Summer2024"),
    "password_before_ansi_reset": ("password=Summer2024\x1b[0m", "Summer2024"),
    "password_before_ansi_colour": ("password=Summer2024\x1b[1;31m", "Summer2024"),
    "dotted_call_of_a_word": ("password=my.pass(word)", "my.pass"),
    "literal_argument_of_a_call": (f"password = decrypt('{PASSWORD}')", PASSWORD),
    "literal_argument_of_a_getter": ("password = config.get('db', 'Summer2024!')", "Summer2024!"),
    # dotted words are no Terraform reference outside HCL's `name = value` and its reference prefixes
    "dotted_words": ("password=correct_horse.battery.staple", "correct_horse"),
    "dotted_local_unspaced": ("password=local.host", "local.host"),
    "dotted_self": ("password = self.made", "self.made"),
    "dotted_each": ("token = each.value", "each.value"),
    # a value shaped like code, a Go struct's next field or a count is still the secret's value: the name
    # says what it holds, and a guess at code kept real passwords
    "go_struct_spaced_fields_password_with_colon": (
        "{User: admin, Password: Summer:2024, Port: 5432}",
        "Summer",
    ),
    "dotted_words_spaced": ("password = correct_horse.battery.staple", "correct_horse"),
    "dotted_local_spaced": ("password = local.host", "local.host"),
    "dotted_call_of_words": ("password=Welcome.Home()", "Welcome.Home"),
    "count_under_a_pin": ("pin_attempts=1234", "1234"),
    "rust_secret_string_new": ('let password = SecretString::new("hunter2".into());', "hunter2"),
    "html_input_value_before_name": (f'<input type="password" value="{PASSWORD}" name="password">', PASSWORD),
    "pgpass_line_among_lines": (f"# ~/.pgpass\nlocalhost:5432:app:appuser:{PASSWORD}\n", PASSWORD),
    "getter_of_a_generated_literal": (f"token = os.environ.get('KEY', '{TOKEN}')", TOKEN),
    "rust_debug_option_short": ('Config { password: Some("hunter2"), user: "x" }', "hunter2"),
}


@pytest.mark.parametrize("text, secret", LEAKS.values(), ids=LEAKS.keys())
def test_printed_secret_is_redacted(text: str, secret: str) -> None:
    assert secret not in redact_text(text).text


HARMLESS = {
    "docker_exec_container_named_like_tool": "['docker', 'exec', 'mongo', 'ls', '-p', '2222']",
    "clock_time": "2024-01-01 12:30:45:123 INFO started",
    "base64_word": "content-encoding: base64:",
    "twilio_sid_alone": f"account AC{HEX} not found",
    # five colon-separated fields that are a cache's or a limiter's key, no password file's line
    "cache_key_numeric_user": "cache:3600:user:42:profile_v2x9k",
    "rate_limit_key": "rate:60:ip:10:blocked_k8s_node7",
    # grep's `file:line:` prefix and colon-separated log fields are no password file's line
    "grep_output": "file.txt:12:foo:bar:baz123XYZ",
    "grep_output_of_a_log": "app.log:120:ERROR:db:ConnectionRefused9x",
    "node_port_fields": "node1:10250:kubelet:metrics:Kx9mP2vQ7rLt",
    "pgpass_like_inside_a_line": "at app.internal:5432:app:user:Xk9vQ2mT7rLp4wZs trace",
    # a `value` that is part of another word, a duration's or a structure's, or an HTML option's
    "default_value_before_name": '{"defaultValue": "Xk9vQ2mT7rLp", "name": "DB_PASSWORD"}',
    "duration_value_before_name": '{"value": "3600", "name": "TOKEN_TTL_SECONDS"}',
    "secret_key_ref_value_before_name": '{"value": "db-creds-v2", "name": "secretKeyRef"}',
    "html_option_value_before_name": '<option value="Xk9vQ2mT7rLp" name="password">',
    # an MD5 digest in base64 is 16 bytes: no Laravel key (AES-256's is 32)
    "content_md5_base64": "content-md5: base64:rL0Y20zC+Fzt72VPzMSk2A==",
}


def test_a_wrapped_secret_keeps_the_printed_shape() -> None:
    # the literal inside the wrapper goes first; the pair then takes the wrapper's name, as it always did
    printed = redact_text('Config { password: Some("hunter2"), user: "x" }').text
    assert (
        printed
        == 'Config { password: [REDACTED:key_value_secret]("[REDACTED:key_value_secret]"), user: "x" }'
    )


#: a getter's literal argument that is an environment variable's name, a path, an id or a message key
NAMED_ARGUMENTS = {
    "getenv_variable_name": ("password = os.getenv('DB_PASSWORD_V2')", "DB_PASSWORD_V2"),
    "environ_get_variable_name": (
        'secret_key = os.environ.get("STRIPE_SECRET_KEY_2")',
        "STRIPE_SECRET_KEY_2",
    ),
    "url_path_argument": ("password = client.get('/api/v1/users/42/password')", "/api/v1/users/42/password"),
    "file_path_argument": ("private_key = load_key('keys/prod-2024.pem')", "keys/prod-2024.pem"),
    "uuid_argument": (
        "secret = vault.read('3f2b8c1e-9a4d-4e6b-8c2f-1d7a5e9b0c3a')",
        "3f2b8c1e-9a4d-4e6b-8c2f-1d7a5e9b0c3a",
    ),
    "i18n_key_argument": ("password = t('auth.password.label2')", "auth.password.label2"),
    "word_argument": ("password = config.get('db', 'password')", "password"),
}


@pytest.mark.parametrize("text, argument", NAMED_ARGUMENTS.values(), ids=NAMED_ARGUMENTS.keys())
def test_a_getters_argument_that_names_the_secret_stays(text: str, argument: str) -> None:
    assert f"'{argument}'" in redact_text(text).text or f'"{argument}"' in redact_text(text).text


@pytest.mark.parametrize("text", HARMLESS.values(), ids=HARMLESS.keys())
def test_printed_look_alike_is_kept(text: str) -> None:
    assert redact_text(text).text == text


def test_a_discord_token_after_a_scheme_stays_the_headers() -> None:
    header = "Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"
    assert redact_text(header).text == "Authorization: Bot [REDACTED:authorization]"
