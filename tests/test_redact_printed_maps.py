"""Secrets in the way runtimes print their maps and lists: Go's `fmt` prints an `http.Header` or a
`url.Values` (`map[string][]string`) as `map[Authorization:[Bearer ...] X-Api-Key:[...]]` (fmt's doc: maps
print as `map[key:value ...]`, slices as `[elem ...]`), gRPC's `metadata.MD` the same way; Erlang prints a
proplist's tuple as `{password,"..."}` and a binary as `<<"...">>` (Erlang's io format `~p`)."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "Zq8vT3kLm9Xw2Rp7Nc4Ha"
LEAKING = (
    f"map[Authorization:[Bearer {SECRET}] User-Agent:[Go-http-client/1.1]]",
    f"map[Authorization:[Basic {SECRET}]]",
    f"request headers=map[Content-Type:[application/json] X-Api-Key:[{SECRET}]]",
    f"map[Accept:[*/*] X-Auth-Token:[{SECRET}]]",
    f"&{{Method:POST Header:map[Authorization:[Bearer {SECRET}]] Host:api.acme.io}}",
    f"form=map[client_id:[web] client_secret:[{SECRET}] grant_type:[client_credentials]]",
    f"metadata: map[authorization:[Bearer {SECRET}] x-request-id:[42]]",
    f'[{{password,"{SECRET}"}},{{user,"bob"}}]',
    f'#{{password => <<"{SECRET}">>, user => <<"bob">>}}',
    f'{{api_key,<<"{SECRET}">>}}',
    f'#{{<<"password">> => <<"{SECRET}">>}}',
    f'[{{<<"x-api-key">>,<<"{SECRET}">>}}]',
    f'{{:password, "{SECRET}"}}',
    f'{{"X-Api-Key": ["{SECRET}"]}}',
    f'http.Header{{"Accept":[]string{{"*/*"}}, "X-Api-Key":[]string{{"{SECRET}"}}}}',
    f'url.Values{{"client_secret":[]string{{"{SECRET}"}}}}',
)
KEPT = (
    "map[Accept:[*/*] Content-Type:[application/json] User-Agent:[Go-http-client/1.1]]",
    "form=map[grant_type:[client_credentials] scope:[read write]]",
    "map[token_count:[3] tokens_used:[120]]",
    '{ok,"done"}',
    '[{user,"bob"},{role,<<"admin">>}]',
    "map[password:[]]",
    "map[Accept:[*/*] X-Api-Key:[-]]",
    "map[password:[***]]",
    # not a Go map: validation errors, Kubernetes' JSON, a log line's bracketed fields
    '{"password":["This field is required."]}',
    '{"token":["Invalid token."]}',
    '{"spec":{"imagePullSecrets":[{"name":"regcred"}]}}',
    "ERROR [http] status:[401] token:[missing]",
    # code: a heredoc's name, a C table of names and their labels
    'my $token = <<"END";',
    '{ password, "Password:" }',
    '{"token":["Invalid."]}',
    '{"password":["hunter"]}',
    '#{<<"user">> => <<"bob">>}',
    '{:ok, "done"}',
    'http.Header{"Accept":[]string{"*/*"}}',
)


@pytest.mark.parametrize("text", LEAKING)
def test_a_secret_in_a_printed_map_is_redacted(text: str) -> None:
    out = redact(text)
    assert SECRET not in out, out


@pytest.mark.parametrize("text", KEPT)
def test_a_printed_map_without_a_secret_stays(text: str) -> None:
    assert redact(text) == text


def test_a_token_holding_a_bracket_is_redacted_whole() -> None:
    out = redact(f"Authorization: Bearer abc]{SECRET}")
    assert SECRET not in out, out


def test_the_map_around_a_redacted_value_keeps_its_other_entries() -> None:
    out = redact(f"map[Authorization:[Bearer {SECRET}] User-Agent:[Go-http-client/1.1]]")
    assert out.startswith("map[Authorization:[") and out.endswith("] User-Agent:[Go-http-client/1.1]]"), out


def test_every_engine_gives_the_reference_text_for_printed_maps() -> None:
    texts = list(LEAKING + KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
