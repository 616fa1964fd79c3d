"""A JVM StackOverflowError is one problem wherever the stack ran out and wherever its print was cut.

HotSpot throws it in whichever call needed the next frame (the recursing method's own, or a call it made into
the JDK or a library) and prints the thread's innermost 1,024 frames; a logger's depth limit prints fewer. The
prints below are HotSpot's shapes of common recursions: a Lombok `toString` over a Hibernate bag, a Lombok
`hashCode` of two entities that hold each other, two Spring beans calling each other through their CGLIB
proxies, a Jackson serializer of the app's, recursions of the app's through RxJava 1's operators, and
Defects4J's Gson-14 and Gson-16. Whose code each frame is is judged on the whole print, as for any trace (the
owner rule where the print shows its entry, not in a cut print), and the frames an overflow reading keeps are
not judged again once sorted. A stack overflow is read from its app's frames as a set, cycle or not.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engines_knowing, made_before

from rounds_bot.grouping import frames
from rounds_bot.grouping.crash_site import site_of_text
from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine
from rounds_bot.grouping.stacktrace import ParsedException
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
HEADER = 'Exception in thread "http-nio-8080-exec-3" java.lang.StackOverflowError\n'

#: each recursion's cycle, one pass, innermost first, and the calls the stack ran out in: its own frames
#: (the recursion's own call needed the next frame) or the JDK's and libraries' above them
TO_STRING = (
    "com.acme.shop.OrderLine.toString(OrderLine.java:12)",
    "java.base/java.lang.String.valueOf(String.java:4465)",
    "java.base/java.lang.StringBuilder.append(StringBuilder.java:173)",
    "java.base/java.util.AbstractCollection.toString(AbstractCollection.java:473)",
    "org.hibernate.collection.spi.PersistentBag.toString(PersistentBag.java:622)",
    "java.base/java.lang.String.valueOf(String.java:4465)",
    "com.acme.shop.Order.toString(Order.java:14)",
    "java.base/java.lang.String.valueOf(String.java:4465)",
)
TO_STRING_RAN_OUT = (
    "java.base/java.util.Arrays.copyOf(Arrays.java:3537)",
    "java.base/java.lang.AbstractStringBuilder.ensureCapacityInternal(AbstractStringBuilder.java:228)",
)
#: the same entities' `toString` as another recursion: the customer's addresses
CUSTOMER_TO_STRING = tuple(
    line.replace("OrderLine", "Address").replace("Order.", "Customer.").replace("Order.java", "Customer.java")
    for line in TO_STRING
)
HASH_CODE = (
    "com.acme.shop.OrderLine.hashCode(OrderLine.java:11)",
    "java.base/java.util.AbstractList.hashCode(AbstractList.java:541)",
    "org.hibernate.collection.spi.PersistentBag.hashCode(PersistentBag.java:540)",
    "com.acme.shop.Order.hashCode(Order.java:13)",
)
HASH_CODE_RAN_OUT = (
    "java.base/java.util.ArrayList$Itr.next(ArrayList.java:1052)",
    "java.base/java.util.AbstractList.hashCode(AbstractList.java:540)",
)
SPRING = (
    "com.acme.billing.TaxService.rate(TaxService.java:17)",
    "org.springframework.cglib.proxy.MethodProxy.invoke(MethodProxy.java:218)",
    "org.springframework.aop.framework.CglibAopProxy$DynamicAdvisedInterceptor.intercept(CglibAopProxy.java:713)",
    "com.acme.billing.TaxService$$SpringCGLIB$$0.rate(<generated>)",
    "com.acme.billing.PriceService.price(PriceService.java:21)",
    "org.springframework.cglib.proxy.MethodProxy.invoke(MethodProxy.java:218)",
    "org.springframework.aop.framework.CglibAopProxy$DynamicAdvisedInterceptor.intercept(CglibAopProxy.java:713)",
    "com.acme.billing.PriceService$$SpringCGLIB$$0.price(<generated>)",
)
SPRING_RAN_OUT = (
    "java.base/java.util.concurrent.ConcurrentHashMap.get(ConcurrentHashMap.java:936)",
    "org.springframework.aop.framework.AdvisedSupport.getInterceptorsAndDynamicInterceptionAdvice"
    "(AdvisedSupport.java:483)",
)
JACKSON = (
    "com.acme.shop.json.OwnerSerializer.serialize(OwnerSerializer.java:23)",
    "com.fasterxml.jackson.databind.ser.BeanPropertyWriter.serializeAsField(BeanPropertyWriter.java:732)",
    "com.fasterxml.jackson.databind.ser.std.BeanSerializerBase.serializeFields(BeanSerializerBase.java:772)",
    "com.fasterxml.jackson.databind.ser.BeanSerializer.serialize(BeanSerializer.java:178)",
    "com.fasterxml.jackson.databind.ser.DefaultSerializerProvider.serializeValue(DefaultSerializerProvider.java:480)",
    "com.fasterxml.jackson.databind.ObjectMapper.writeValue(ObjectMapper.java:3126)",
    "com.fasterxml.jackson.core.JsonGenerator.writeObject(JsonGenerator.java:2516)",
)
JACKSON_RAN_OUT = ("java.base/java.lang.ThreadLocal.get(ThreadLocal.java:160)",)
#: Defects4J's Gson-14 and Gson-16: `$Gson$Types.resolve` recursing, the stack run out under the app's own
#: call (`indexOf`, `declaringClassOf`) into reflection
GSON_14_RAN_OUT = (
    "java.lang.String.lastIndexOf(String.java:1611)",
    "sun.reflect.misc.ReflectUtil.isNonPublicProxyClass(ReflectUtil.java:287)",
    "sun.reflect.misc.ReflectUtil.checkPackageAccess(ReflectUtil.java:165)",
    "sun.reflect.generics.reflectiveObjects.TypeVariableImpl.getGenericDeclaration(TypeVariableImpl.java:164)",
    "sun.reflect.generics.reflectiveObjects.TypeVariableImpl.equals(TypeVariableImpl.java:189)",
    "com.google.gson.internal.$Gson$Types.indexOf($Gson$Types.java:419)",
    "com.google.gson.internal.$Gson$Types.resolveTypeVariable($Gson$Types.java:410)",
    "com.google.gson.internal.$Gson$Types.resolve($Gson$Types.java:333)",
)
GSON_14 = ("com.google.gson.internal.$Gson$Types.resolve($Gson$Types.java:387)",) * 2
GSON_16_RAN_OUT = (
    "java.lang.String.lastIndexOf(String.java:1611)",
    "sun.reflect.misc.ReflectUtil.isNonPublicProxyClass(ReflectUtil.java:287)",
    "sun.reflect.misc.ReflectUtil.checkPackageAccess(ReflectUtil.java:165)",
    "sun.reflect.generics.reflectiveObjects.TypeVariableImpl.getGenericDeclaration(TypeVariableImpl.java:164)",
    "com.google.gson.internal.$Gson$Types.declaringClassOf($Gson$Types.java:441)",
    "com.google.gson.internal.$Gson$Types.resolveTypeVariable($Gson$Types.java:411)",
    "com.google.gson.internal.$Gson$Types.resolve($Gson$Types.java:343)",
)
GSON_16 = ("com.google.gson.internal.$Gson$Types.resolve($Gson$Types.java:392)",)
RECURSIONS = {
    "lombok toString": (TO_STRING, TO_STRING_RAN_OUT),
    "lombok hashCode": (HASH_CODE, HASH_CODE_RAN_OUT),
    "spring proxies": (SPRING, SPRING_RAN_OUT),
    "jackson serializer": (JACKSON, JACKSON_RAN_OUT),
}


def _print(cycle: tuple[str, ...], ran_out: tuple[str, ...] = (), start: int = 0, printed: int = 1024) -> str:
    """A StackOverflowError's print: the calls the stack ran out in, then the cycle from its frame `start`
    on, `printed` frames in all (HotSpot's 1,024; a logger's depth limit fewer)."""
    lines = list(ran_out)
    while len(lines) < printed:
        lines.append(cycle[(start + len(lines) - len(ran_out)) % len(cycle)])
    return HEADER + "".join(f"\tat {line}\n" for line in lines[:printed])


def _event(n: int, stacktrace: str, error_type: str = "java.lang.StackOverflowError") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type=error_type,
        message="",
        stacktrace=stacktrace,
    )


def _signatures(texts: list[str], engine: GroupingEngine | None = None) -> list[str]:
    found = (engine or GroupingEngine()).assign_all([_event(n, text) for n, text in enumerate(texts)])
    return [assignment.signature_id for assignment in found]


@pytest.mark.parametrize("recursion", RECURSIONS)
def test_a_full_print_and_a_loggers_cut_print_are_one_problem_in_either_order(recursion: str) -> None:
    """The full print ran out in the JDK at one frame of the cycle; a logger's depth limit of 10 printed
    another occurrence, run out elsewhere, with one pass of the cycle (less than two: nothing repeats)."""
    cycle, ran_out = RECURSIONS[recursion]
    full = _print(cycle, ran_out, start=3)
    cut = _print(cycle, start=5, printed=len(cycle) + 1)
    cut_in_the_jdk = _print(cycle, ran_out, start=1, printed=len(ran_out) + len(cycle))
    for texts in ([full, cut, cut_in_the_jdk], [cut, cut_in_the_jdk, full], [cut_in_the_jdk, full, cut]):
        assert len(set(_signatures(texts))) == 1


@pytest.mark.parametrize("recursion", RECURSIONS)
def test_a_stack_overflow_run_out_at_any_frame_of_its_cycle_is_one_problem(recursion: str) -> None:
    cycle, ran_out = RECURSIONS[recursion]
    texts = [_print(cycle, start=start) for start in range(len(cycle))] + [_print(cycle, ran_out, start=2)]
    assert len(set(_signatures(texts))) == 1


def test_two_recursions_are_two_problems() -> None:
    texts = [
        _print(TO_STRING, TO_STRING_RAN_OUT),
        _print(CUSTOMER_TO_STRING, TO_STRING_RAN_OUT),
        _print(HASH_CODE, HASH_CODE_RAN_OUT),
        _print(SPRING, SPRING_RAN_OUT),
    ]
    assert len(set(_signatures(texts))) == 4


def test_defects4j_gson_14_and_gson_16_stay_two_problems() -> None:
    """One recursion, two bugs: the app's call the recursion made when the stack ran out tells them apart."""
    gson_14 = [_print(GSON_14, GSON_14_RAN_OUT), _print(GSON_14, GSON_14_RAN_OUT[2:], printed=40)]
    gson_16 = [_print(GSON_16, GSON_16_RAN_OUT), _print(GSON_16, GSON_16_RAN_OUT[3:], printed=12)]
    found = _signatures(gson_14 + gson_16)
    assert found[0] == found[1] and found[2] == found[3] and found[0] != found[2]


def test_the_configured_in_app_rules_say_which_frames_are_the_apps() -> None:
    """The app's helper the stack ran out in: its own code by default (a call of the app's the recursion
    made can tell two bugs apart), a library's where configured so: left out as the JDK's are."""
    audit = "com.acme.shop.Audit.mask(Audit.java:40)"
    texts = [_print(TO_STRING, (audit, *TO_STRING_RAN_OUT)), _print(TO_STRING, TO_STRING_RAN_OUT, start=4)]
    assert len(set(_signatures(texts))) == 2
    configured = GroupingEngine(GroupingConfig(in_app_exclude=["com.acme.shop.Audit"]))
    found = configured.assign_all([_event(n, text) for n, text in enumerate(texts)])
    assert found[0].signature_id == found[1].signature_id
    assert found[0].fingerprint_hash == found[1].fingerprint_hash
    # and a package configured as the app's is read by, as the rest of grouping reads it
    hibernate = GroupingEngine(GroupingConfig(in_app_include=["org.hibernate"]))
    with_bag = [_print(TO_STRING, start=1), _print(TO_STRING, start=4, printed=10)]
    assert _signatures(with_bag, hibernate)[0] != _signatures(with_bag)[0]
    assert len(set(_signatures(with_bag, hibernate))) == 1


def _as_the_release_before(exception: ParsedException, *_: object) -> tuple[object, ...]:
    return exception.frames


@pytest.mark.parametrize(
    ("text", "error_type"),
    [
        (_print(TO_STRING, TO_STRING_RAN_OUT, start=3), "java.lang.IllegalStateException"),
        (
            "java.lang.StackOverflowError\n"
            "\tat java.base/java.lang.StringBuilder.append(StringBuilder.java:179)\n"
            "\tat java.base/java.lang.StringBuilder.append(StringBuilder.java:173)\n"
            "\tat com.acme.shop.Page.render(Page.java:12)\n\tat com.acme.shop.Main.main(Main.java:3)\n",
            "java.lang.IllegalArgumentException",
        ),
        (
            "java.lang.StackOverflowError\n"
            + "".join(
                f"\tat java.base/java.util.regex.Pattern$Loop.match(Pattern.java:{4785 + n % 2})\n"
                for n in range(1024)
            ),
            "java.lang.StackOverflowError",
        ),
    ],
    ids=["another error", "an overload calling its twin", "no app frame"],
)
def test_other_errors_read_exactly_as_before(
    monkeypatch: pytest.MonkeyPatch, text: str, error_type: str
) -> None:
    text = text.replace("java.lang.StackOverflowError", error_type)
    event = _event(0, text, error_type)
    now = GroupingEngine().assign(event)
    monkeypatch.setattr(frames, "overflow_frames", _as_the_release_before)
    before = GroupingEngine().assign(event)
    assert (now.fingerprint_hash, now.explanation) == (before.fingerprint_hash, before.explanation)


@pytest.mark.parametrize("recursion", RECURSIONS)
@pytest.mark.parametrize("release", ["the release before", "the release before it"])
def test_a_signature_made_from_a_stack_overflow_before_keeps_receiving_it(
    monkeypatch: pytest.MonkeyPatch, recursion: str, release: str
) -> None:
    """The release before read the frames the stack ran out in, and the pass a cut left outermost rotated
    to the frame that sorts first; the one before it, as the cut left it: each one's signature keeps
    receiving the prints it made it from, and their other prints found since."""
    cycle, ran_out = RECURSIONS[recursion]
    if release == "the release before it":
        ran_out = ()  # (both read the frames the stack ran out in: a cut cycle's pass tells them apart)
        monkeypatch.setattr(frames, "_canonical_pass", lambda cycle: cycle)
    text = _print(cycle, ran_out, start=2)
    made, saved = made_before(monkeypatch, frames, "overflow_frames", _as_the_release_before, _event(0, text))
    for engine in engines_knowing(saved).values():
        found = engine.assign_all([_event(1, text), _event(2, text)])
        assert "an earlier version" in found[0].explanation.splitlines()[-1]
        found += engine.assign_all([_event(3, _print(cycle, start=5, printed=10))])
        assert [(a.signature_id, a.tier) for a in found] == [(made, "fingerprint")] * 3


GUAVA = "com.google.common.base.MoreObjects$ToStringHelper.toString(MoreObjects.java:475)"
VALUE_OF = "java.base/java.lang.String.valueOf(String.java:4465)"
BAG = (
    "java.base/java.util.AbstractCollection.toString(AbstractCollection.java:473)",
    "org.hibernate.collection.spi.PersistentBag.toString(PersistentBag.java:622)",
    VALUE_OF,
)


def _site(text: str) -> str | None:
    site = site_of_text(text)
    return site.crash_site if site else None


def test_two_recursions_through_one_library_the_print_does_not_tell_from_the_app_are_two_problems() -> None:
    """9-frame `toString` cycles of `io.acme` through Guava's `ToStringHelper`, cut inside the recursion:
    Guava sorts before `io.acme`, and is no crash site the two share."""
    order = ("io.acme.shop.OrderLine.toString(OrderLine.java:30)", GUAVA, VALUE_OF, *BAG)
    order += ("io.acme.shop.Order.toString(Order.java:40)", GUAVA, VALUE_OF)
    address = ("io.acme.crm.Address.toString(Address.java:22)", GUAVA, VALUE_OF, *BAG)
    address += ("io.acme.crm.Customer.toString(Customer.java:50)", GUAVA, VALUE_OF)
    texts = [_print(order), _print(address)]
    assert len(set(_signatures(texts))) == 2
    assert [_site(text) for text in texts] == [
        "io.acme.shop.OrderLine:toString",
        "io.acme.crm.Address:toString",
    ]


SERIALIZE = (
    "com.fasterxml.jackson.databind.ser.DefaultSerializerProvider.serializeValue(DefaultSerializerProvider.java:480)",
    "com.fasterxml.jackson.core.JsonGenerator.writeObject(JsonGenerator.java:2516)",
)


def _whole(serializer: str, caller: str) -> str:
    """A print that shows its entry: the owner rule reads Jackson as another owner's code the app calls."""
    return HEADER + "".join(
        f"\tat {line}\n" for line in [serializer, *SERIALIZE] * 150 + [caller, "io.acme.App.main(App.java:5)"]
    )


def test_a_whole_prints_libraries_are_another_owners_by_the_owner_rule() -> None:
    node = _whole(
        "io.acme.tree.NodeSerializer.serialize(NodeSerializer.java:23)",
        "io.acme.tree.Exporter.export(E.java:1)",
    )
    edge = _whole(
        "io.acme.graph.EdgeSerializer.serialize(EdgeSerializer.java:40)", "io.acme.graph.Dump.run(D.java:9)"
    )
    ran_out_in_jackson = node.replace(
        HEADER,
        HEADER + "\tat com.fasterxml.jackson.core.json.WriterBasedJsonGenerator.writeString(W.java:441)\n",
    )
    texts = [node, edge, ran_out_in_jackson]
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    assert found[0].signature_id != found[1].signature_id
    assert found[0].signature_id == found[2].signature_id
    assert [_site(text) for text in texts] == [
        "io.acme.tree.NodeSerializer:serialize",
        "io.acme.graph.EdgeSerializer:serialize",
        "io.acme.tree.NodeSerializer:serialize",
    ]
    assert "com.fasterxml" not in found[0].explanation.split("rule:")[0].split("in-app frames")[-1]


def test_the_crash_site_stays_the_recursing_method() -> None:
    """Defects4J's Gson-14 recursing in `$Gson$Types.resolve`: its site, not the frame that sorts first."""
    below = "\tat com.google.gson.Gson.getAdapter(Gson.java:356)\n"
    assert _site(_print(GSON_14, printed=1023) + below) == "com.google.gson.internal.$Gson$Types:resolve"


def test_the_explanation_says_what_an_overflow_reading_left_out() -> None:
    explanation = GroupingEngine().assign(_event(0, _print(TO_STRING, TO_STRING_RAN_OUT))).explanation
    assert "left out of a stack overflow: the runtime's and libraries' frames" in explanation
    assert "it repeats a recursion cycle" not in explanation


#: RxJava 1's operators (package `rx`, named by no library rule) in a recursion of the app's through an
#: `Observable`: their `call` is named as an entry is, and may be the frame of the app's code that sorts last
RX_1 = (
    "rx.internal.operators.OnSubscribeMap.call(OnSubscribeMap.java:48)",
    "rx.Observable.unsafeSubscribe(Observable.java:10327)",
)


@pytest.mark.parametrize("printed", [1024, 10])
def test_two_recursions_through_rxjava_1_cut_before_their_entry_are_two_problems(printed: int) -> None:
    """A cut print does not show who called into the app, so the owner rule does not apply to it; sorted,
    the frames of an overflow reading end in RxJava's `call`, which is no entry of the program."""
    feed = _print(("com.acme.feed.Pager.load(Pager.java:40)", *RX_1), printed=printed)
    chat = _print(("com.acme.chat.Inbox.replies(Inbox.java:77)", *RX_1), printed=printed)
    assert len(set(_signatures([feed, chat]))) == 2


def test_a_recursion_through_an_anonymous_rxjava_1_function_reads_the_apps_frames_as_the_apps() -> None:
    """`Pager$1.call` and RxJava's `call` sort after `Pager.loadPage`; the app's frames are the app's."""
    rx = (RX_1[0], RX_1[0].replace(":48", ":33"), RX_1[1])
    feed = (
        "com.acme.feed.Pager.loadPage(Pager.java:40)",
        *rx,
        "com.acme.feed.Pager$1.call(Pager.java:45)",
        *rx,
    )
    chat = (
        "com.acme.chat.Thread.fetchReplies(Thread.java:77)",
        *rx,
        "com.acme.chat.Thread$2.call(Thread.java:80)",
    )
    chat += rx
    found = GroupingEngine().assign_all([_event(0, _print(feed)), _event(1, _print(chat))])
    assert found[0].signature_id != found[1].signature_id
    frame_lines = [line.strip() for line in found[0].explanation.splitlines() if " frame: com.acme." in line]
    assert frame_lines and all(line.startswith("+ frame") for line in frame_lines)
    assert "another owner's code (com.acme)" not in found[0].explanation


def test_a_short_stack_overflow_with_no_cycle_reads_as_the_set_of_its_apps_frames() -> None:
    """By design a stack overflow is read from its app's frames as a set, cycle or not: a few frames with no
    recursion in them (a thread started with a small stack) read so too, the same every time it recurs."""
    frames_seen = (
        "com.acme.shop.Page.render(Page.java:12)",
        "java.base/java.lang.StringBuilder.append(StringBuilder.java:173)",
        "com.acme.shop.Cart.total(Cart.java:30)",
        "com.acme.shop.Main.main(Main.java:3)",
    )
    text = HEADER + "".join(f"\tat {line}\n" for line in frames_seen)
    first = GroupingEngine().assign(_event(0, text))
    again = GroupingEngine().assign_all([_event(1, text), _event(2, text)])
    assert {a.fingerprint_hash for a in again} == {first.fingerprint_hash}
    assert again[1].tier == "fingerprint" and again[1].signature_id == again[0].signature_id
    assert "the app's frames read as a set" in first.explanation
    read = [
        line.split("frame: ")[1].split(" (")[0]
        for line in first.explanation.splitlines()
        if "frame: " in line
    ]
    assert read == ["com.acme.shop.Cart total", "com.acme.shop.Main main", "com.acme.shop.Page render"]
    assert _site(text) == "com.acme.shop.Page:render"
