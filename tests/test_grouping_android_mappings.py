"""An Android tombstone's frames in mappings that are no installed image: the app's APK deleted under the
running process (an update installed while it ran: the kernel appends ` (deleted)` to the mapping's path in
`/proc/<pid>/maps`, which debuggerd prints), and ART's JIT code cache (`/memfd:jit-cache (deleted)` since
Android 10, `[anon:dalvik-jit-code-cache]` before), code the runtime compiled in this process. The function
of a frame of a deleted APK is read as any other's. A JIT frame that names its Java method is that method's,
read as a JVM frame is (its class and method; the app's or a library's by its package), so whether ART
compiled it just in time or ahead of time (`base.odex`) is one crash; a JIT frame that names none is the
runtime's, with no function. Signatures made before keep receiving their events."""

from __future__ import annotations

import pytest
from test_grouping_android import _ART_14, _INVOKE, _LIBC_14, _tombstone, event
from test_grouping_builtins import assert_found_by_an_earlier_version, assert_one_new_signature

from rounds_bot.grouping.crash_site import site_of_text
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import parse_stacktrace

_DELETED_APK = "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/base.apk (deleted)"
_JIT = "/memfd:jit-cache (deleted) (offset 0x2000000)"


def _updated(offset: str = "0x1f4000", jit: str = " (com.example.shop.GameView.onDrawFrame+196)") -> str:
    """The renderer's abort of `test_grouping_android`, in a process whose APK an update replaced: its native
    library at `offset` in the APK, the Java caller JIT-compiled (`jit`: the function the unwinder named)."""
    return _tombstone(
        [
            f"{_LIBC_14} (abort+164) (BuildId: 2d1f4a0b)",
            "/system/lib64/libbase.so (android::base::DefaultAborter(char const*)+12) (BuildId: 77e1c0)",
            "/system/lib64/libbase.so (android::base::LogMessage::~LogMessage()+356) (BuildId: 77e1c0)",
            f"{_DELETED_APK} (offset {offset}) (Mesh::upload()+44)",
            f"{_DELETED_APK} (offset {offset}) (Renderer::draw(Frame const&)+120)",
            f"{_DELETED_APK} (offset {offset}) (Java_com_example_shop_GameView_nativeRender+40)",
            f"{_JIT}{jit}",
            "[anon:dalvik-jit-code-cache]",
            f"{_ART_14} (art_quick_invoke_stub+548) (BuildId: 0c2f)",
            f"{_ART_14} ({_INVOKE}+216)",
            f"{_ART_14} (art::Thread::CreateCallback(void*)+1152) (BuildId: 0c2f)",
            f"{_LIBC_14} (__pthread_start(void*)+196) (BuildId: 2d1f4a0b)",
        ]
    )


UPDATED = _updated()
#: what the release before this reading saved of UPDATED (each function read with the mapping's offset, the
#: JIT's frames the app's): its hashes and crash site, pinned
BEFORE = (
    [
        "371703f30342cb2c93105ef4cdabd7092bcd346b477b9f4e83bd99d857fc998f",
        "085d26514205ca0e30c6bae3a08d57ff2f3eb445fd70d059deb317ae974f6c51",
        "4e999661be92552968214a5efe178cf82c151ade08e0b2219d05e13601fe043c",
    ],
    "base.apk:0x1f4000) (Mesh::upload",
)


def _read(text: str) -> list[tuple[str | None, str | None, str]]:
    trace = parse_stacktrace(text)
    assert trace is not None
    roles = InAppRules().roles(trace)
    return [
        (frame.function, frame.module, role.role)
        for frame, role in zip(trace.exceptions[0].frames, roles.frames[0], strict=True)
    ]


def test_a_deleted_apks_frame_names_its_function_and_is_the_apps() -> None:
    assert _read(UPDATED)[3:6] == [
        ("Mesh::upload", "base.apk", "app"),
        ("Renderer::draw", "base.apk", "app"),
        ("Java_com_example_shop_GameView_nativeRender", "base.apk", "app"),
    ]


@pytest.mark.parametrize(
    ("mapping", "module"),
    [
        (_JIT, "memfd:jit-cache"),
        ("/memfd:jit-zygote-cache (deleted) (offset 0x1000000)", "memfd:jit-zygote-cache"),
        ("[anon:dalvik-jit-code-cache]", "[anon:dalvik-jit-code-cache]"),
        ("[anon_shmem:dalvik-zygote-jit-code-cache]", "[anon_shmem:dalvik-zygote-jit-code-cache]"),
        ("/dev/ashmem/dalvik-jit-code-cache (deleted)", "dalvik-jit-code-cache"),
    ],
)
def test_a_jit_frame_without_a_function_is_the_runtimes(mapping: str, module: str) -> None:
    text = _tombstone([f"{_DELETED_APK} (offset 0x1f4000) (Mesh::upload()+44)", mapping])
    assert _read(text) == [("Mesh::upload", "base.apk", "app"), (None, module, "library")]


@pytest.mark.parametrize(
    ("mapping", "read"),
    [
        (
            f"{_JIT} (com.example.shop.GameView.onDrawFrame+196)",
            ("onDrawFrame", "com.example.shop.GameView", "app"),
        ),
        (
            "[anon:dalvik-jit-code-cache] (com.example.shop.GameView.onDrawFrame+196)",
            ("onDrawFrame", "com.example.shop.GameView", "app"),
        ),
        (
            "/memfd:jit-zygote-cache (deleted) (offset 0x1000000) (android.os.Handler.dispatchMessage+10)",
            ("dispatchMessage", "android.os.Handler", "library"),
        ),
        (f"{_JIT} (java.util.ArrayList.get+12)", ("get", "java.util.ArrayList", "library")),
        (
            "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/oat/arm64/base.odex"
            " (com.example.shop.GameView.onDrawFrame+196)",
            ("onDrawFrame", "com.example.shop.GameView", "app"),
        ),
    ],
)
def test_a_compiled_java_method_keeps_its_name_and_is_whose_its_package_says(
    mapping: str, read: tuple[str, str, str]
) -> None:
    text = _tombstone([f"{_DELETED_APK} (offset 0x1f4000) (Mesh::upload()+44)", mapping])
    assert _read(text)[1] == read


def _check_jni_abort(method: str, compiled: str = _JIT) -> str:
    """CheckJNI's abort of a JNI call a Java method made wrongly: every native frame is ART's or libc's."""
    return _tombstone(
        [
            f"{_LIBC_14} (abort+164) (BuildId: 2d1f4a0b)",
            f"{_ART_14} (art::JavaVMExt::JniAbort(char const*, char const*)+1124)",
            f"{_ART_14} (art::(anonymous namespace)::CheckJNI::GetStringUTFChars("
            "_JNIEnv*, _jstring*, unsigned char*)+88)",
            f"{compiled} ({method}+196)",
            f"{_ART_14} (art_quick_invoke_stub+548) (BuildId: 0c2f)",
            f"{_LIBC_14} (__pthread_start(void*)+196) (BuildId: 2d1f4a0b)",
        ]
    )


_ODEX = "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/oat/arm64/base.odex"
CART_METHOD = "com.example.shop.CartActivity.onCreate"
CART = _check_jni_abort(CART_METHOD)
#: what the release before this reading saved of CART (the JIT frame `memfd:jit-cache`'s) and of CART
#: compiled ahead of time (the frame `base.odex`'s): their hashes and crash sites, pinned
BEFORE_JIT = (
    [
        "f23c7d30e3a6449b769a655735b1ab14f7bf79e7c1c7a816c67e1e2275465d45",
        "7fff47da5446d5bd714780d5979ae408954cf1989906021727a280bc431a3d07",
        "8f1fc1477e00a1addbd991cc5250780aa02dd2db63d386482c22767a278a1ca0",
    ],
    "memfd:jit-cache:0x2000000) (com.example.shop.CartActivity.onCreate",
)
BEFORE_ODEX = (
    [
        "03b3e26eb5d7facc39a3321bf4e26d9b842fff7f9d4f079691ecee9821bd4416",
        "153238a00f575cf6aca1622fcdfb5daa2078d5ba0201c82e63f61c2e194d5cff",
        "ea523d6950302169d5dd5906f77a39623870b4ce0883aaa3ab8c67d2dd52a2f4",
    ],
    "base.odex:com.example.shop.CartActivity.onCreate",
)


def test_two_check_jni_aborts_in_two_jit_compiled_methods_are_two_problems() -> None:
    other = _check_jni_abort("com.example.shop.ProfileActivity.loadAvatar")
    placed = GroupingEngine().assign_all([event(CART), event(other)])
    assert placed[0].signature_id != placed[1].signature_id


def test_one_crash_compiled_just_in_time_or_ahead_of_time_is_one_problem() -> None:
    anon = "[anon:dalvik-jit-code-cache]"
    assert_one_new_signature(
        [
            event(text)
            for text in (CART, _check_jni_abort(CART_METHOD, _ODEX), _check_jni_abort(CART_METHOD, anon))
        ]
    )


def test_the_crash_site_of_a_check_jni_abort_is_the_jit_compiled_method() -> None:
    found = site_of_text(CART)
    assert found is not None and found.crash_site == "com.example.shop.CartActivity:onCreate"


@pytest.mark.parametrize(
    ("saved", "text"),
    [(BEFORE_JIT, CART), (BEFORE_ODEX, _check_jni_abort(CART_METHOD, _ODEX))],
    ids=["just in time", "ahead of time"],
)
def test_a_signature_made_when_a_compiled_method_read_otherwise_keeps_receiving_its_events(
    saved: tuple[list[str], str | None], text: str
) -> None:
    hashes, crash_site = saved
    state = SignatureState(
        signature_id="sig_earlier", service="shop-android", seq=0, hashes=hashes, crash_site=crash_site
    )
    assert_found_by_an_earlier_version(state, [event(text)])


def test_the_crash_site_is_the_apps_function_not_the_mappings_offset() -> None:
    found = site_of_text(UPDATED)
    assert found is not None and found.crash_site == "base.apk:Mesh::upload"


def test_two_bugs_in_a_deleted_apk_are_two_problems() -> None:
    other = UPDATED.replace("Mesh::upload()", "Mixer::pull(float*, int)")
    placed = GroupingEngine().assign_all([event(UPDATED), event(other)])
    assert placed[0].signature_id != placed[1].signature_id


def test_one_crash_in_two_builds_is_one_problem() -> None:
    assert_one_new_signature([event(text) for text in (UPDATED, _updated(offset="0x1f8000"))])


def test_a_signature_made_when_these_frames_read_otherwise_keeps_receiving_its_events() -> None:
    hashes, crash_site = BEFORE
    state = SignatureState(
        signature_id="sig_earlier", service="shop-android", seq=0, hashes=hashes, crash_site=crash_site
    )
    assert_found_by_an_earlier_version(state, [event(UPDATED)])
