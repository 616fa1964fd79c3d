"""The JVM's fatal error log (`hs_err_pid<pid>.log`), as OpenJDK's vmError.cpp and frame.cpp lay it out: read
to the crashed thread's mixed stack and the signal; the VM's and the system's frames are not the app's, a JNI
library's are; one crash site is one signature whatever the pc, pid, tid and depth; two native crash sites
behind one Java call are two; and a signature an earlier release made from the message (it read no frame)
keeps receiving the log."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, hotspot_error, parse_stacktrace
from rounds_bot.models import ErrorEvent


def _log(native: str, pc: int, pid: int, tid: int, depth: int = 1) -> str:
    java = ["j  com.example.Native.parse(Ljava/lang/String;)I+0", "j  com.example.shop.Cart.total()I+12"]
    java += [f"j  com.example.shop.CartController.step{i}()V+{4 * i} shop@1.0" for i in range(depth)]
    java += [
        f"J 1234 c2 com.example.shop.CartController.get()Ljava/lang/String; (42 bytes) @ 0x{pc:016x}"
        f" [0x{pc - 0x5E:016x}+0x000000000000005e]",
        "j  java.lang.Thread.run()V+11 java.base@17.0.9",
        "v  ~StubRoutines::call_stub",
    ]
    native_frames = [
        f"C  [libfoo.so+0x{0x1234 + len(native):x}]  {native}+0x14",
        "C  [libfoo.so+0x1300]  Java_com_example_Native_parse+0x30",
        *java,
        "V  [libjvm.so+0x8a1b2c]  JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaThread*)+0x3cc",
        "C  [libc.so.6+0x94ac3]",
    ]
    return (
        "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
        f"#  SIGSEGV (0xb) at pc=0x{pc:016x}, pid={pid}, tid={tid}\n#\n"
        "# JRE version: OpenJDK Runtime Environment Temurin-17.0.9+9 (17.0.9+9) (build 17.0.9+9)\n"
        "# Problematic frame:\n"
        f"# C  [libfoo.so+0x{0x1234 + len(native):x}]  {native}+0x14\n#\n"
        f"# Core dump will be written. Default location: /app/core.{pid}\n#\n\n"
        "---------------  T H R E A D  ---------------\n\n"
        f'Current thread (0x{pc:016x}):  JavaThread "http-nio-8080-exec-{tid % 9}" daemon [_thread_in_native,'
        f" id={tid}]\n\n"
        "Native frames: (J=compiled Java code, A=aot compiled Java code, j=interpreted, Vv=VM code,"
        " C=native code)\n"
        + "\n".join(native_frames)
        + "\n\nJava frames: (J=compiled Java code, j=interpreted, Vv=VM code)\n"
        + "\n".join(java)
        + "\n\n---------------  P R O C E S S  ---------------\n"
    )


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return crash_event(
        n,
        stacktrace,
        error_type="SIGSEGV",
        message="A fatal error has been detected by the Java Runtime Environment",
    )


def test_a_fatal_error_log_is_read_to_the_crashed_threads_mixed_stack() -> None:
    trace = parse_stacktrace(_log("foo_parse", 0x7F1A2B3C4D5E, 12345, 12346))
    assert trace is not None and trace.runtime == "java"
    (error,) = trace.exceptions
    assert (error.type, error.value) == ("SIGSEGV", "SIGSEGV (0xb)")
    assert error.frames[:4] == (
        Frame("foo_parse", module="libfoo.so", in_app=True),
        Frame("Java_com_example_Native_parse", module="libfoo.so", in_app=True),
        Frame("parse", module="com.example.Native"),
        Frame("total", module="com.example.shop.Cart"),
    )
    assert Frame("get", module="com.example.shop.CartController") in error.frames
    assert error.frames[-3:] == (
        Frame("StubRoutines::call_stub", in_app=False),
        Frame("JavaCalls::call_helper", module="libjvm.so", in_app=False),
        Frame(None, module="libc.so.6", in_app=False),
    )


def test_the_vms_and_the_jdks_frames_are_a_librarys_and_the_apps_classes_the_apps() -> None:
    trace = parse_stacktrace(_log("foo_parse", 0x7F1A2B3C4D5E, 12345, 12346))
    assert trace is not None
    roles = InAppRules().roles(trace).frames[0]
    by_name = {
        frame.function: role.role for frame, role in zip(trace.exceptions[0].frames, roles, strict=True)
    }
    assert by_name["foo_parse"] == by_name["total"] == "app"
    assert by_name["run"] == by_name["JavaCalls::call_helper"] == "library"


def test_the_problematic_frame_and_the_java_frames_stand_in_for_a_missing_mixed_stack() -> None:
    text = _log("foo_parse", 0x7F1A2B3C4D5E, 12345, 12346).replace("Native frames:", "Native stack:")
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [f.function for f in trace.exceptions[0].frames[:3]] == ["foo_parse", "parse", "total"]


def test_one_crash_site_is_one_signature_and_two_behind_one_java_call_are_two() -> None:
    ids = signatures_of(
        [
            _log("foo_parse", 0x7F1A2B3C4D5E, 12345, 12346),
            _log("foo_parse", 0x7F9A2B3C4D5E, 23456, 23470, depth=3),
            _log("foo_free", 0x7F1A2B3C4D5E, 12345, 12346),
        ],
        _event,
    )
    assert ids[0] == ids[1] != ids[2]


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_fatal_error_logs(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No release before read these logs: their events went to their message's template, and that signature
    keeps receiving them (it is not split into trace signatures, which would file duplicates)."""
    texts = [
        _log("foo_parse", 0x7F1A2B3C4D5E, 12345, 12346),
        _log("foo_parse", 0x7F9A2B3C4D5E, 23456, 23470, depth=3),
        _log("foo_free", 0x7F1A2B3C4D5E, 12345, 12346),
    ]
    # a release that read no log
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, hotspot_error, "is_report", lambda lines: False, texts, _event
    )
    assert set(found[how]) == {(made, "fingerprint")}


def test_a_java_trace_with_a_fatal_error_header_and_no_frame_of_its_own_reads_as_java() -> None:
    """A log that prints the header and no frame (a Java trace that quotes the log's first lines) is read as
    releases before read it."""
    text = (
        "java.lang.IllegalStateException: JVM crashed previously, see below\n"
        "\tat com.example.Main.check(Main.java:10)\n"
        "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
        "#  SIGSEGV (0xb) at pc=0x00007f6b5c2a4d5e, pid=12345, tid=12346\n#\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "java"
    assert trace.exceptions[0].type == "java.lang.IllegalStateException"
    assert trace.exceptions[0].frames == (
        Frame("check", module="com.example.Main", filename="Main.java", lineno=10),
    )


@pytest.mark.parametrize(
    ("line", "function"),
    [
        ("v  ~StubRoutines::call_stub 0x00000001125cc154", "StubRoutines::call_stub"),
        (
            "v  ~StubRoutines::Stub Generator call_stub_stub 0x000003ff70580edc",
            "StubRoutines::Stub Generator call_stub_stub",
        ),
        ("v  ~RuntimeStub::_new_array_Java 0x00007f6b4c5a0cc6", "RuntimeStub::_new_array_Java"),
        ("v  ~BufferBlob::Interpreter", "BufferBlob::Interpreter"),
    ],
)
def test_a_vm_stubs_address_never_reaches_its_frame(line: str, function: str) -> None:
    """JDK 17 and later print a stub's address after its name (`frame::print_on_error`)."""
    assert hotspot_error.frame_of(line) == Frame(function, in_app=False)


def test_a_native_frames_source_file_and_line_are_read_and_its_offset_left_out() -> None:
    """JDK 20 and later print the source file and line after a symbol when the image has debug information."""
    assert hotspot_error.frame_of("C  [libfoo.so+0x1234]  foo_parse+0x14  (foo.c:42)") == Frame(
        "foo_parse", module="libfoo.so", filename="foo.c", lineno=42, in_app=True
    )


def test_one_native_function_is_one_signature_whatever_its_line_and_stub_addresses() -> None:
    text = _log("foo_parse", 0x7F1A2B3C4D5E, 12345, 12346)
    first = text.replace("foo_parse+0x14\n", "foo_parse+0x14  (foo.c:42)\n").replace(
        "~StubRoutines::call_stub", "~StubRoutines::call_stub 0x00007f6b4c5a0cc6"
    )
    assert first.count("(foo.c:42)") == 2  # the problematic frame and the stack's
    second = first.replace("+0x14  (foo.c:42)", "+0x38  (foo.c:47)").replace("4c5a0cc6", "11111cc6")
    ids = signatures_of([first, second], _event)
    assert ids[0] == ids[1]


@pytest.mark.parametrize(
    "image",
    [
        "ntdll.dll", "KERNEL32.DLL", "KERNELBASE.dll", "ucrtbase.dll", "api-ms-win-crt-runtime-l1-1-0.dll",
        "msvcr100.dll", "VCRUNTIME140.dll", "MSVCP140.dll", "java", "java.exe", "javaw.exe", "libjsig.so",
        "libjawt.so", "libmlib_image.so", "libattach.so", "libjdwp.so", "libdt_socket.so", "libjsound.so",
        "libsaproc.so", "libjvmcicompiler.so", "jvm.dll", "java.dll", "zip.dll", "net.dll", "nio.dll",
        "verify.dll", "libjli.so", "libjli.dylib", "jli.dll", "libjvm.dylib", "libc.so.6",
        "libpthread.so.0", "libz.so.1", "libcrypto.so.3", "libssl.so.3", "ld-linux-x86-64.so.2",
        "libsystem_kernel.dylib", "libdyld.dylib", "libfreetype.so.6",
    ],
)  # fmt: skip
def test_the_systems_the_jdks_and_its_bundled_runtimes_images_are_a_librarys(image: str) -> None:
    frame = hotspot_error.frame_of(f"C  [{image}+0x1234]  some_function+0x14")
    assert frame is not None and frame.in_app is False


@pytest.mark.parametrize("image", ["libfoo.so", "mylib.dll", "libshop.dylib", "libjavacv.so", "zipper.dll"])
def test_an_image_the_app_loaded_is_the_apps(image: str) -> None:
    frame = hotspot_error.frame_of(f"C  [{image}+0x1234]  some_function+0x14")
    assert frame is not None and frame.in_app is True


def _windows_log(java_site: str) -> str:
    """A crash in a system DLL whose native walk never reached Java (jnativehook's, jzmq's issues' logs)."""
    return (
        "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
        "#  EXCEPTION_ACCESS_VIOLATION (0xc0000005) at pc=0x00007ffc1a2b3c4d, pid=4321, tid=8765\n#\n"
        "# Problematic frame:\n# C  [ntdll.dll+0x2a3b4]\n#\n\n"
        "Native frames: (J=compiled Java code, j=interpreted, Vv=VM code, C=native code)\n"
        "C  [ntdll.dll+0x2a3b4]\nC  [KERNELBASE.dll+0x1c2d3]\nV  [jvm.dll+0x1a2b3c]\n"
        "C  0x00000000027e1234\n\n"
        "Java frames: (J=compiled Java code, j=interpreted, Vv=VM code)\n"
        "j  org.jnativehook.GlobalScreen.registerNativeHook()V+0\n"
        f"j  com.example.shop.{java_site}()V+5\n"
        "j  com.example.shop.Main.main([Ljava/lang/String;)V+12\n"
        "v  ~StubRoutines::call_stub\n\n"
    )


def test_the_java_frames_are_read_below_a_native_stack_that_never_reached_java() -> None:
    trace = parse_stacktrace(_windows_log("Hooks.start"))
    assert trace is not None
    functions = [f.function for f in trace.exceptions[0].frames]
    assert functions[:2] == [None, None]  # ntdll's and KERNELBASE's frames, which name no function
    assert "registerNativeHook" in functions and "start" in functions
    ids = signatures_of([_windows_log("Hooks.start"), _windows_log("Keys.listen")], _event)
    assert ids[0] != ids[1]


def test_a_hidden_classs_address_is_masked() -> None:
    """JDK 21 names a lambda's hidden class with its address (`Foo$$Lambda+0x0000007410d1a458`)."""
    first = hotspot_error.frame_of("j  com.x.Y$$Lambda+0x0000007410d1a458.accept(Ljava/lang/Object;)V+5")
    second = hotspot_error.frame_of("j  com.x.Y$$Lambda+0x0000007f22aa5a0c.accept(Ljava/lang/Object;)V+5")
    assert first is not None and first == second and first.function == "accept"
    assert first.module is not None and "7410d1a458" not in first.module


def test_an_internal_errors_value_leaves_out_the_vms_source_folder_and_line() -> None:
    text = (
        "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
        "#  Internal Error (/work/jdk/src/hotspot/share/gc/g1/g1RemSet.cpp:1234), pid=12345, tid=12346\n"
        "#  assert(false) failed: card not dirty\n#\n\n"
        "Native frames: (J=compiled Java code, j=interpreted, Vv=VM code, C=native code)\n"
        "V  [libjvm.so+0x8a1b2c]  G1RemSet::refine_card(CardTable::CardValue*, unsigned int)+0x3cc\n\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert (trace.exceptions[0].type, trace.exceptions[0].value) == (
        "Internal Error",
        "Internal Error (g1RemSet.cpp)",
    )


@pytest.mark.parametrize(
    "line",
    [
        "J 4321  com.example.shop.Native.parse(Ljava/lang/String;)I (0 bytes) @ 0x00007f1a2b3c4d5e"
        " [0x00007f1a2b3c4d00+0x000000000000005e]",
        "J 4321 c2 com.example.shop.Native.parse(Ljava/lang/String;)I (42 bytes) @ 0x00007f1a2b3c4d5e"
        " [0x00007f1a2b3c4d00+0x000000000000005e]",
    ],
)
def test_a_compiled_native_methods_frame_without_a_compiler_name_is_read(line: str) -> None:
    """A native method's compiled wrapper has no compiler name, printed empty (`J 4321  com...`)."""
    assert hotspot_error.frame_of(line) == Frame("parse", module="com.example.shop.Native")
