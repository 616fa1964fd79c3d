"""Log template mining: skeletons, the miner's rules, and re-loading a miner from its templates."""

from __future__ import annotations

import random

import pytest

from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.skeletons import EXACT_MARK, WILDCARD, render, skeleton
from rounds_bot.grouping.templates import TemplateMiner

W = WILDCARD


def shape(message: str) -> tuple[str, ...]:
    return skeleton(normalize_uncached(message))


def mine(messages: list[str], miner: TemplateMiner | None = None, bucket: str = "svc") -> list[str]:
    miner = TemplateMiner() if miner is None else miner
    return [miner.match(bucket, shape(m)).template_id for m in messages]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("user 123 not found in shard 7", "user <*> not found in shard <*>"),
        (
            "PacketResponder 1 for block blk_38865049064139660 terminating",
            "PacketResponder <*> for block <*> terminating",
        ),
        # a run of parameters is one parameter: lists of any length keep one shape
        (
            "PCI Interrupt Link [LNKD] (IRQs 3 4 5 6 7 10 11 12) *0, disabled.",
            "PCI Interrupt Link [LNKD] (IRQs <*> disabled.",
        ),
        (
            "BLOCK* ask 10.251.126.5:50010 to delete  blk_-9016 blk_-8695 blk_-71",
            "BLOCK* ask <*> to delete <*>",
        ),
        # a word glued to digits is a parameter for the miner, like Drain's numeric tokens
        ("allocating divert_blk for eth0", "allocating divert_blk for <*>"),
        # the value of a key=value token is data, its key is part of the statement; an empty value is
        # no data: the field is absent, which is part of the statement too
        (
            "authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=host.example.com user=root",
            "authentication failure; logname= uid=<*> euid=<*> tty=<*> ruser= rhost=<*> user=<*>",
        ),
        # a key=value pair inside a token is data there too; the rest of the token is text
        ("session opened for user root by LOGIN(uid=0)", "session opened for user root by LOGIN(uid=<*>)"),
        ("session opened for user cyrus by (uid=0)", "session opened for user cyrus by (uid=<*>)"),
        # dot leaders separate the label from its value
        ("icache prefetch depth....................0", "icache prefetch depth ... <*>"),
        # a message of parameters only keeps its punctuation, matched exactly
        ("lr:00004ed0 cr:28244842 xer:20000002", f"exactly: lr:{W} cr:{W} xer:{W}"),
        ("r24=0x0ffea4c8 r25=0x00000003", f"exactly: {W}={W} {W}={W}"),
    ],
)
def test_skeletons_of_real_log_lines(message: str, expected: str) -> None:
    assert render(shape(message)) == expected


def test_all_parameter_message_gets_an_exact_skeleton() -> None:
    assert shape("jetty-6.1.26")[0] == EXACT_MARK
    assert shape("jetty-6.1.26") != shape("mapResourceRequest:<memory:1024, vCores:1>")


def test_user_ids_and_shards_make_one_template() -> None:
    first, second = mine(["user 123 not found in shard 7", "user 9 not found in shard 12"])
    assert first == second


def test_different_sentences_stay_apart() -> None:
    ids = mine(["user 123 not found in shard 7", "cart 123 is empty", "user 123 logged in"])
    assert len(set(ids)) == 3


def test_templates_differing_only_in_a_word_never_merge() -> None:
    ids = mine(
        [
            "attempt_1445144423722_0020_m_000000_0 TaskAttempt Transitioned from NEW to UNASSIGNED",
            "attempt_1445144423722_0020_m_000001_0 TaskAttempt Transitioned from UNASSIGNED to ASSIGNED",
            "Changing view acls to: yarn,curi",
            "Changing modify acls to: yarn,curi",
        ]
    )
    assert len(set(ids)) == 4


def test_a_word_position_that_shows_a_number_widens_the_template() -> None:
    miner = TemplateMiner()
    ids = mine(
        [
            "Invalid user webmaster from 173.234.31.186",
            "Invalid user test9 from 52.80.34.196",  # a number where a word was: a parameter
            "Invalid user chen from 202.100.179.208",  # any word fits there now
            "Invalid user webmaster from 10.0.0.1",
        ],
        miner,
    )
    assert len(set(ids)) == 1
    assert render(miner.template(ids[0])) == "Invalid user <*> from <*>"
    assert render(miner.first_template(ids[0])) == "Invalid user webmaster from <*>"


def test_widening_is_refused_when_two_templates_could_then_match_one_line() -> None:
    miner = TemplateMiner()
    root, cluster = mine(
        [
            "domain root_domain is no longer served by node node-128",
            "domain cluster_usr_backup is no longer served by node node-192",
        ],
        miner,
    )
    # Either template could widen to take "root3_domain": widening one would let both match
    # the next "root_domain" line, so the miner keeps a template for this exact skeleton.
    third = mine(["domain root3_domain is no longer served by node node-96"], miner)[0]
    assert len({root, cluster, third}) == 3
    assert mine(["domain root_domain is no longer served by node node-1"], miner) == [root]
    assert mine(["domain root7_domain is no longer served by node node-2"], miner) == [third]


def test_empty_brackets_are_a_value_and_an_empty_key_is_an_absent_field() -> None:
    ids = mine(
        [
            "connection from 24.54.76.216 (24-54-76-216.bflony.adelphia.net) at Fri Jun 17 07:07:00 2005",
            "connection from 222.33.90.199 () at Mon Jun 20 03:40:59 2005",
            "authentication failure; logname= uid=0 ruser= rhost=example.com",
            "authentication failure; logname= uid=7 ruser= rhost=example.org",
            "authentication failure; logname=root uid=0 ruser=bob rhost=example.com",
        ]
    )
    # the reverse lookup printed nothing where a host name goes: the same statement
    assert ids[0] == ids[1]
    # `logname=` with nothing is the field's absence, often the very cause of an error: kept apart
    assert ids[2] == ids[3] != ids[4]


def test_a_word_the_service_uses_as_a_key_introduces_a_value_in_prose() -> None:
    miner = TemplateMiner()
    before = mine(["session opened for user cyrus by (uid=0)"], miner)
    # not learned yet: another user is another statement as far as the miner can tell
    assert mine(["session opened for user news by (uid=0)"], miner) != before
    mine(["authentication failure; logname= uid=0 euid=0 rhost=example.com user=root"], miner)
    closed = mine(["session closed for user cyrus", "session closed for user news"], miner)
    assert closed[0] == closed[1]
    assert render(miner.template(closed[0])) == "session closed for user <*>"
    # a line a template already matches as it is keeps that template
    assert mine(["session opened for user cyrus by (uid=0)"], miner) == before


def test_learned_keys_are_per_bucket() -> None:
    miner = TemplateMiner()
    mine(["login failed; user=root"], miner, bucket="auth")
    ids = mine(["lookup for user alice", "lookup for user bob"], miner, bucket="billing")
    assert ids[0] != ids[1]


def test_templates_are_kept_apart_per_bucket() -> None:
    miner = TemplateMiner()
    first = mine(["connection reset by peer"], miner, bucket="checkout")
    second = mine(["connection reset by peer"], miner, bucket="payments")
    assert first != second


def _stream(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    users = ["webmaster", "chen", "test9", "admin", "oracle2", "pgadmin"]
    domains = ["root_domain", "root3_domain", "usr_backup"]
    states = ["NEW", "RUNNING", "DONE"]
    shapes = [
        lambda: f"Invalid user {rng.choice(users)} from 10.0.{rng.randrange(256)}.{rng.randrange(256)}",
        lambda: f"Failed password for {rng.choice(users)} from 10.1.1.{rng.randrange(256)} port 22 ssh2",
        lambda: f"session opened for user {rng.choice(users)} by (uid={rng.randrange(3)})",
        lambda: f"domain {rng.choice(domains)} is no longer served by node node-{rng.randrange(300)}",
        lambda: f"Transitioned from {rng.choice(states)} to {rng.choice(states)}",
        lambda: f"login failed; user={rng.choice(users)} tty={rng.choice(['', 'ssh'])}",
        lambda: f"session closed for user {rng.choice(users)} ({rng.choice(['', 'idle'])})",
        lambda: " ".join(str(rng.randrange(100)) for _ in range(rng.randint(1, 4))),
    ]
    return [rng.choice(shapes)() for _ in range(count)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_reloaded_miner_answers_exactly_as_the_one_that_saved_it(seed: int) -> None:
    messages = _stream(seed, 400)
    original = TemplateMiner()
    mine(messages[:200], original)
    reloaded = TemplateMiner()
    for template_id in list(original._templates):
        reloaded.load(original.state(template_id))
    assert mine(messages[200:], original) == mine(messages[200:], reloaded)
    assert {t: original.state(t) for t in original._templates} == {
        t: reloaded.state(t) for t in reloaded._templates
    }


@pytest.mark.parametrize("seed", [4, 5])
def test_no_two_normal_templates_can_match_the_same_line(seed: int) -> None:
    miner = TemplateMiner()
    mine(_stream(seed, 600), miner)
    templates = [t for t in miner._templates.values() if not t.exact]
    for index, a in enumerate(templates):
        for b in templates[index + 1 :]:
            if a.bucket != b.bucket or len(a.tokens) != len(b.tokens):
                continue
            overlap = all(x == y or W in (x, y) for x, y in zip(a.tokens, b.tokens, strict=True))
            assert not overlap, (a.tokens, b.tokens)


def test_an_answer_once_given_for_a_line_never_changes() -> None:
    miner = TemplateMiner()
    messages = _stream(6, 500)
    first = dict(zip(messages, mine(messages, miner), strict=True))
    again = dict(zip(messages, mine(messages, miner), strict=True))
    assert first == again
