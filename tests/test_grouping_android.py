"""Android's code is not the app's: the platform's Java frames (`android.`, `com.android.internal.`,
`dalvik.`, `libcore.`), Jetpack's (`androidx.`) and Google's Android libraries
(`com.google.android.material.`, `.gms.`; an AOSP app's or Google's app's own package stays the app's),
and the native frames of the system's images (`/system/`, `/apex/`, `/vendor/` ...; `libart.so`,
`libhwui.so`, the kernel's `[vdso]`). An app's crash is its own frames: two crashes that share only
Android's frames are two problems, one crash is one problem on every Android version (Android 13 added
`Looper.loopOnce`; the system's libraries move and change between versions), and its crash site is the
app's frame. Signatures made while Android's frames were read as the app's keep receiving their events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from test_grouping_builtins import assert_found_by_an_earlier_version, assert_one_new_signature
from test_grouping_builtins import event as builtin_event

from rounds_bot.grouping.crash_site import site_of_text
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MESSAGE = "cart 17 is empty"

#: a tap on a button whose handler throws, on Android 14 (the OpenTelemetry Android SDK records
#: `Throwable.printStackTrace`'s text): the app's three frames, then Material's button and the platform's
#: main loop down to the zygote that started the process
CHECKOUT = f"""java.lang.IllegalStateException: {MESSAGE}
\tat com.example.shop.cart.CartViewModel.checkout(CartViewModel.kt:41)
\tat com.example.shop.cart.CartFragment.onCheckoutClicked(CartFragment.kt:88)
\tat com.example.shop.cart.CartFragment.onViewCreated$lambda$2(CartFragment.kt:52)
\tat android.view.View.performClick(View.java:7659)
\tat com.google.android.material.button.MaterialButton.performClick(MaterialButton.java:1218)
\tat android.view.View.performClickInternal(View.java:7636)
\tat android.view.View.-$$Nest$mperformClickInternal(Unknown Source:0)
\tat android.view.View$PerformClick.run(View.java:30156)
\tat android.os.Handler.handleCallback(Handler.java:958)
\tat android.os.Handler.dispatchMessage(Handler.java:99)
\tat android.os.Looper.loopOnce(Looper.java:205)
\tat android.os.Looper.loop(Looper.java:294)
\tat android.app.ActivityThread.main(ActivityThread.java:8177)
\tat java.lang.reflect.Method.invoke(Native Method)
\tat com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run(RuntimeInit.java:552)
\tat com.android.internal.os.ZygoteInit.main(ZygoteInit.java:971)"""
#: the same crash on Android 12: no `Looper.loopOnce` (Android 13 split it out of `loop`), other lines, and
#: no `-$$Nest$m` accessor (the compiler's nest-mate bridge of later builds)
CHECKOUT_ANDROID_12 = f"""java.lang.IllegalStateException: {MESSAGE}
\tat com.example.shop.cart.CartViewModel.checkout(CartViewModel.kt:41)
\tat com.example.shop.cart.CartFragment.onCheckoutClicked(CartFragment.kt:88)
\tat com.example.shop.cart.CartFragment.onViewCreated$lambda$2(CartFragment.kt:52)
\tat android.view.View.performClick(View.java:7448)
\tat com.google.android.material.button.MaterialButton.performClick(MaterialButton.java:1119)
\tat android.view.View.performClickInternal(View.java:7425)
\tat android.view.View.access$3600(View.java:810)
\tat android.view.View$PerformClick.run(View.java:28305)
\tat android.os.Handler.handleCallback(Handler.java:938)
\tat android.os.Handler.dispatchMessage(Handler.java:99)
\tat android.os.Looper.loop(Looper.java:223)
\tat android.app.ActivityThread.main(ActivityThread.java:7656)
\tat java.lang.reflect.Method.invoke(Native Method)
\tat com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run(RuntimeInit.java:592)
\tat com.android.internal.os.ZygoteInit.main(ZygoteInit.java:947)"""
#: another bug of the app, the same exception type, behind the same platform frames: a profile screen's save
PROFILE = CHECKOUT.replace(
    """com.example.shop.cart.CartViewModel.checkout(CartViewModel.kt:41)
\tat com.example.shop.cart.CartFragment.onCheckoutClicked(CartFragment.kt:88)
\tat com.example.shop.cart.CartFragment.onViewCreated$lambda$2(CartFragment.kt:52)""",
    """com.example.shop.profile.ProfileViewModel.save(ProfileViewModel.kt:77)
\tat com.example.shop.profile.ProfileFragment.onSaveClicked(ProfileFragment.kt:64)
\tat com.example.shop.profile.ProfileFragment.onViewCreated$lambda$0(ProfileFragment.kt:39)""",
)
#: a coroutine's crash on a worker thread: the app's suspend function, kotlinx.coroutines and Jetpack's
#: lifecycle scope
COROUTINE = f"""java.lang.IllegalStateException: {MESSAGE}
\tat com.example.shop.sync.SyncWorker.pushCart(SyncWorker.kt:58)
\tat com.example.shop.sync.SyncWorker.access$pushCart(SyncWorker.kt:20)
\tat com.example.shop.sync.SyncWorker$run$1.invokeSuspend(SyncWorker.kt:31)
\tat kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith(ContinuationImpl.kt:33)
\tat kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:108)
\tat androidx.lifecycle.DispatchQueue.dispatchAndEnqueue$lambda$2$lambda$1(DispatchQueue.kt:104)
\tat kotlinx.coroutines.scheduling.CoroutineScheduler.runSafely(CoroutineScheduler.kt:584)
\tat kotlinx.coroutines.scheduling.CoroutineScheduler$Worker.run(CoroutineScheduler.kt:684)"""
#: as logcat prints the crash (`-v threadtime`): the AndroidRuntime tag's lines
LOGCAT = "\n".join(
    f"11-28 08:00:00.123  4242  4242 E AndroidRuntime: {line}"
    for line in ["FATAL EXCEPTION: main", "Process: com.example.shop, PID: 4242", *CHECKOUT.split("\n")]
)

#: Android's debuggerd, the crashed thread of a tombstone
_APK = "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/base.apk!libshop.so (offset 0x1f4000)"
_LIBC_14 = "/apex/com.android.runtime/lib64/bionic/libc.so"
_ART_14 = "/apex/com.android.art/lib64/libart.so"
_INVOKE = "art::ArtMethod::Invoke(art::Thread*, unsigned int*, unsigned int, art::JValue*, char const*)"
_BRIDGE = (
    "art::interpreter::ArtInterpreterToCompiledCodeBridge"
    "(art::Thread*, art::ArtMethod*, art::ShadowFrame*, unsigned short, art::JValue*)"
)


def _tombstone(backtrace: list[str]) -> str:
    frames = "\n".join(
        f"      #{n:02d} pc {0x1A2B0 + 0x40 * n + len(where):016x}  {where}"
        for n, where in enumerate(backtrace)
    )  # each frame at an offset of its own: they change with every build of the image
    return f"""*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
Build fingerprint: 'google/oriole/oriole:14/AP2A.240905.003/12231197:user/release-keys'
ABI: 'arm64'
pid: 4242, tid: 4287, name: GLThread 412  >>> com.example.shop <<<
signal 6 (SIGABRT), code -1 (SI_QUEUE), fault addr --------
Abort message: 'mesh has no vertices'
backtrace:
{frames}
"""


#: an abort the app's native renderer raises through libbase's `CHECK`, called from Java through JNI on a GL
#: thread, on Android 14
MESH_14 = _tombstone(
    [
        f"{_LIBC_14} (abort+164) (BuildId: 2d1f4a0b)",
        "/system/lib64/libbase.so (android::base::DefaultAborter(char const*)+12) (BuildId: 77e1c0)",
        "/system/lib64/libbase.so (android::base::LogMessage::~LogMessage()+356) (BuildId: 77e1c0)",
        f"{_APK} (Mesh::upload()+44) (BuildId: 9f1e2d3c)",
        f"{_APK} (Renderer::draw(Frame const&)+120) (BuildId: 9f1e2d3c)",
        f"{_APK} (Java_com_example_shop_GameView_nativeRender+40) (BuildId: 9f1e2d3c)",
        f"{_ART_14} (art_quick_generic_jni_trampoline+148) (BuildId: 0c2f)",
        f"{_ART_14} (art_quick_invoke_stub+548) (BuildId: 0c2f)",
        f"{_ART_14} ({_INVOKE}+216)",
        "/system/framework/arm64/boot-framework.oat (android.opengl.GLSurfaceView$GLThread.run+48)",
        f"{_ART_14} (art::Thread::CreateCallback(void*)+1152) (BuildId: 0c2f)",
        f"{_LIBC_14} (__pthread_start(void*)+196) (BuildId: 2d1f4a0b)",
        f"{_LIBC_14} (__start_thread+64) (BuildId: 2d1f4a0b)",
    ]
)
#: the same crash on Android 9: the C library and ART in /system (no APEX yet), other ART functions
MESH_9 = _tombstone(
    [
        "/system/lib64/libc.so (abort+116)",
        "/system/lib64/libbase.so (android::base::DefaultAborter(char const*)+8)",
        "/system/lib64/libbase.so (android::base::LogMessage::~LogMessage()+724)",
        f"{_APK} (Mesh::upload()+44) (BuildId: 9f1e2d3c)",
        f"{_APK} (Renderer::draw(Frame const&)+120) (BuildId: 9f1e2d3c)",
        f"{_APK} (Java_com_example_shop_GameView_nativeRender+40) (BuildId: 9f1e2d3c)",
        "/system/lib64/libart.so (art_quick_generic_jni_trampoline+152)",
        "/system/lib64/libart.so (art_quick_invoke_stub+584)",
        f"/system/lib64/libart.so ({_INVOKE}+200)",
        f"/system/lib64/libart.so ({_BRIDGE}+344)",
        "/system/framework/arm64/boot-framework.oat (android.opengl.GLSurfaceView$GLThread.run+48)",
        "/system/lib64/libart.so (art::Thread::CreateCallback(void*)+1120)",
        "/system/lib64/libc.so (__pthread_start(void*)+36)",
        "/system/lib64/libc.so (__start_thread+68)",
    ]
)
#: another bug of the app's native code behind the same system frames: its audio engine's
MIXER_14 = (
    MESH_14.replace("Mesh::upload()", "Mixer::pull(float*, int)")
    .replace("Renderer::draw(Frame const&)", "AudioEngine::tick()")
    .replace("GameView_nativeRender", "AudioEngine_nativeTick")
)

JAVA_APP = "com.example.shop.cart.CartViewModel.checkout(CartViewModel.kt:41)"
ZYGOTE = "com.android.internal.os.ZygoteInit.main(ZygoteInit.java:971)"


def event(stacktrace: str) -> ErrorEvent:
    native = stacktrace.startswith("***")
    return builtin_event(
        stacktrace,
        service="shop-android",
        error_type="SIGABRT" if native else "java.lang.IllegalStateException",
        message="mesh has no vertices" if native else MESSAGE,
    )


def _roles(text: str) -> list[tuple[str | None, str]]:
    trace = parse_stacktrace(text)
    assert trace is not None
    roles = InAppRules().roles(trace)
    return [
        (frame.function, role.role)
        for frame, role in zip(trace.exceptions[0].frames, roles.frames[0], strict=True)
    ]


@pytest.mark.parametrize(
    "frame",
    [
        "android.os.Handler.dispatchMessage(Handler.java:99)",
        "androidx.fragment.app.Fragment.performCreateView(Fragment.java:3114)",
        "com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run(RuntimeInit.java:552)",
        "dalvik.system.BaseDexClassLoader.findClass(BaseDexClassLoader.java:259)",
        "libcore.io.IoBridge.open(IoBridge.java:574)",
        "java.lang.Thread.run(Thread.java:1012)",
        "kotlin.collections.CollectionsKt___CollectionsKt.first(_Collections.kt:205)",
        "kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:108)",
        "com.google.android.material.button.MaterialButton.performClick(MaterialButton.java:1218)",
    ],
)
def test_androids_java_frames_are_a_librarys_and_the_app_is_its_package(frame: str) -> None:
    text = f"java.lang.IllegalStateException: {MESSAGE}\n\tat {JAVA_APP}\n\tat {frame}\n\tat {ZYGOTE}"
    app, library, zygote = _roles(text)
    assert (app[1], library[1], zygote[1]) == ("app", "library", "library")


def test_in_an_android_crash_only_the_apps_own_frames_are_the_apps() -> None:
    roles = _roles(CHECKOUT)
    assert [function for function, role in roles if role == "app"] == [
        "checkout",
        "onCheckoutClicked",
        "onViewCreated$lambda$2",
    ]


def _tombstone_frame(where: str) -> str:
    return _tombstone([f"{_APK} (Mesh::upload()+44) (BuildId: 9f1e2d3c)", where])


@pytest.mark.parametrize(
    ("where", "role"),
    [
        (f"{_LIBC_14} (abort+164) (BuildId: 2d1f4a0b)", "library"),
        ("/system/lib/libc.so (abort+62)", "library"),
        (f"{_ART_14} (art_quick_invoke_stub+548) (BuildId: 0c2f)", "library"),
        (
            "/system/lib64/libhwui.so (android::uirenderer::renderthread::RenderThread::threadLoop()+300)",
            "library",
        ),
        ("/system/lib64/libbase.so (android::base::LogMessage::~LogMessage()+356)", "library"),
        ("/system/lib64/libutils.so (android::Thread::_threadLoop(void*)+260)", "library"),
        ("/vendor/lib64/egl/libGLESv2_adreno.so (glDrawElements+88) (BuildId: 5a5a)", "library"),
        ("/vendor/lib64/hw/vulkan.adreno.so (BuildId: 5a5a)", "library"),
        ("/system/framework/arm64/boot-framework.oat (android.os.Looper.loop+152)", "library"),
        ("[vdso] (__kernel_clock_gettime+120)", "library"),
        (
            "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/base.apk!libapp.so (offset 0x1000) (render+120)",
            "app",
        ),
        ("/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/lib/arm64/libgame.so (Level::load()+8)", "app"),
        (
            "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/lib/arm64/libc++_shared.so (std::terminate()+56)",
            "library",
        ),
    ],
)
def test_a_tombstones_system_images_are_a_librarys_and_the_apps_libraries_the_apps(
    where: str, role: str
) -> None:
    (_, own), (_, found) = _roles(_tombstone_frame(where))
    assert (own, found) == ("app", role)


def test_a_system_library_named_without_its_path_is_a_librarys() -> None:
    """Android's HWAddressSanitizer prints a frame of a system image as `(path+offset)`."""
    text = """==4242==ERROR: HWAddressSanitizer: tag-mismatch on address 0x004a00000040 at pc 0x007b5c2a1b2c
    #0 0x7b5c2a1b2c  (/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/lib/arm64/libshop.so+0x21b2c)
    #1 0x7c4f2b9d44  (/system/lib64/libhwui.so+0x4ad44) (BuildId: 1a2b)
    #2 0x7c4f0a1b2c  (/apex/com.android.art/lib64/libart.so+0x4b8c4) (BuildId: 3c4d)"""
    assert [role for _, role in _roles(text)] == ["app", "library", "library"]


@pytest.mark.parametrize(
    ("text", "site"),
    [
        (CHECKOUT, "com.example.shop.cart.CartViewModel:checkout"),
        (LOGCAT, "com.example.shop.cart.CartViewModel:checkout"),
        (COROUTINE, "com.example.shop.sync.SyncWorker:pushCart"),
        (MESH_14, "libshop.so:Mesh::upload"),
        (MESH_9, "libshop.so:Mesh::upload"),
    ],
    ids=["OpenTelemetry SDK", "logcat", "coroutine", "tombstone, Android 14", "tombstone, Android 9"],
)
def test_an_android_crashs_site_is_the_apps_frame(text: str, site: str) -> None:
    found = site_of_text(text)
    assert found is not None and found.crash_site == site


@pytest.mark.parametrize(("one", "other"), [(CHECKOUT, PROFILE), (MESH_14, MIXER_14)], ids=["Java", "native"])
def test_two_app_crashes_that_share_only_androids_frames_are_two_problems(one: str, other: str) -> None:
    placed = GroupingEngine().assign_all([event(one), event(other)])
    assert placed[0].signature_id != placed[1].signature_id


@pytest.mark.parametrize(
    "texts",
    [(CHECKOUT, CHECKOUT_ANDROID_12, LOGCAT), (MESH_14, MESH_9)],
    ids=["Java on Android 14 and 12, and in logcat", "tombstones of Android 14 and 9"],
)
def test_one_crash_on_two_android_versions_is_one_problem(texts: tuple[str, ...]) -> None:
    assert_one_new_signature([event(text) for text in texts])


#: what the release before (Android's frames the app's) saved of CHECKOUT and of MESH_14: its hashes (frames,
#: all frames, site) and crash site, pinned
BEFORE_ANDROID = {
    "java": (
        [
            "c4052178f1c9b08d55d865e71258667869c8b309dc4df0db87d08c8c9f43a8c6",
            "f9fb635976f9394e5ae469e67941f7d303fd2b38bf1a362bd2c0b5a69c7cddd6",
            "77ebd6935bb482d66a0530971c81711cd7f8162f86ba5854f8b2574f53202593",
        ],
        "com.android.internal.os.RuntimeInit$MethodAndArgsCaller:run",
    ),
    "native": (
        [
            "9e6d80362c8348a265a851a7ea7a550af50287ede71935a87ff1eccf00eba216",
            "5166f0a120374f87aedf3b12f2f7d5b16bafa8770558c7d1d836c309d1be52dc",
            "ba8bcde5b03aba5cde6b58f6269d69b49665f6087e22e18cc365f76d769abe38",
        ],
        "libbase.so:android::base::DefaultAborter",
    ),
}


@pytest.mark.parametrize(
    ("saved", "texts"),
    [
        (BEFORE_ANDROID["java"], (CHECKOUT, CHECKOUT_ANDROID_12, LOGCAT)),
        (BEFORE_ANDROID["native"], (MESH_14, MESH_9)),
    ],
    ids=["Java", "native"],
)
def test_a_signature_made_when_androids_frames_were_the_apps_keeps_receiving_its_events(
    saved: tuple[list[str], str], texts: tuple[str, ...]
) -> None:
    hashes, crash_site = saved
    state = SignatureState(
        signature_id="sig_earlier", service="shop-android", seq=0, hashes=hashes, crash_site=crash_site
    )
    assert_found_by_an_earlier_version(state, [event(text) for text in texts])


@pytest.mark.parametrize(
    "frame",
    [
        # an AOSP app's and Google's apps' own packages: the platform's are `com.android.internal.` and the
        # libraries', not every name under `com.android.` or `com.google.android.`
        "com.android.settings.ui.ConversationFragment.bind(ConversationFragment.java:88)",
        "com.android.systemui.statusbar.phone.StatusBar.start(StatusBar.java:901)",
        "com.google.android.apps.maps.sync.Sync.push(Sync.java:41)",
    ],
)
def test_an_aosp_or_google_apps_own_frames_stay_the_apps(frame: str) -> None:
    text = f"java.lang.NullPointerException: {MESSAGE}\n\tat {frame}\n\tat {ZYGOTE}"
    app, zygote = _roles(text)
    assert (app[1], zygote[1]) == ("app", "library")


def test_a_debuggers_source_file_under_a_system_like_folder_stays_the_apps() -> None:
    """gdb names a frame's source file, not an image: `/system/src/` on a Linux host is the app's code."""
    text = """#0  0x00007ffff7a42428 in raise () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x0000555555555169 in parse (s=0x0) at /system/src/parse.c:12
#2  0x00005555555551a0 in main () at /product/src/main.c:30"""
    roles = dict(_roles(text))
    assert (roles["parse"], roles["main"]) == ("app", "app")
