"""Which images a JVM's fatal error log names are not the app's: the JDK's own libraries and launchers, the
C runtimes a JDK bundles, and the platform's system libraries.

    is_library_image(image) -> bool    `libjsig.so`, `jvm.dll`, `KERNEL32.DLL`, `libz.so.1`: True

A log names an image by its file name (`frame::print_on_error` prints `[<image>+0x<offset>]`), in the case
the file system has it (`KERNEL32.DLL`, `ntdll.dll`): it is compared without its case, its `lib` prefix and
its ending (`.so` and its version, `.dylib`, `.dll`, `.exe`), so `libjli.so`, `libjli.dylib` and `jli.dll`
are one.
Any other image is a library the application loaded (`System.loadLibrary`): a JNI library, the app's.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.native_libraries import is_native_library

#: the JDK's native libraries, as OpenJDK's build names them (make/modules/*/Lib.gmk, `NAME :=` of each
#: `SetupJdkLibrary`; make/hotspot/lib/CompileJvm.gmk for `jvm`, make/modules/java.base/Launcher.gmk and
#: Lib.gmk for the launchers' `jli` and `java`/`javaw`), and GraalVM's compiler library (`jvmcicompiler`)
_JDK = frozenset(
    {
        # java.base and the VM
        "jvm", "java", "javaw", "jli", "jsig", "jimage", "net", "nio", "verify", "zip", "syslookup",
        "simdsort", "fdlibm", "jsvml",
        # java.desktop
        "awt", "awt_headless", "awt_xawt", "awt_lwawt", "jawt", "mlib_image", "fontmanager", "lcms",
        "javajpeg", "splashscreen", "jsound", "osx", "osxapp", "osxui", "freetype", "harfbuzz", "dcpr",
        "t2k",
        # the other modules' libraries
        "instrument", "management", "management_ext", "management_agent", "prefs", "rmi", "j2gss",
        "w2k_lsa_auth", "osxkrb5", "sspi_bridge", "j2pcsc", "j2pkcs11", "sunmscapi", "sunec", "attach",
        "jdwp", "dt_socket", "dt_shmem", "saproc", "sawindbg", "extnet", "sctp", "jaas", "le",
        "javaaccessbridge", "windowsaccessbridge", "jawtaccessbridge", "jvmcicompiler",
    }
)  # fmt: skip
#: the Microsoft C and C++ runtimes a JDK for Windows bundles in its `bin/` (JDK 7 and 8 `msvcr100`,
#: `msvcr120`; JDK 11 and later `vcruntime140`, `msvcp140`, the universal CRT `ucrtbase`)
_BUNDLED_RUNTIMES = frozenset(
    {
        "msvcr100", "msvcp100", "msvcr110", "msvcp110", "msvcr120", "msvcp120", "msvcp140", "msvcp140_1",
        "msvcp140_2", "vcruntime140", "vcruntime140_1", "ucrtbase", "msvcrt",
    }
)  # fmt: skip
#: Windows' own libraries (its `System32`): the native API, the Win32 API's, the loader's
_WINDOWS = frozenset(
    {
        "ntdll", "kernel32", "kernelbase", "user32", "gdi32", "gdi32full", "win32u", "advapi32", "sechost",
        "rpcrt4", "ws2_32", "mswsock", "ole32", "oleaut32", "combase", "shell32", "shlwapi", "bcrypt",
        "bcryptprimitives", "crypt32", "winmm", "version", "iphlpapi", "dbghelp", "psapi", "imm32",
        "uxtheme", "comctl32", "dwmapi", "nsi", "opengl32", "d3d9", "dxgi", "cfgmgr32", "powrprof",
    }
)  # fmt: skip
#: the Windows API sets' forwarding libraries (`api-ms-win-crt-runtime-l1-1-0.dll`, Microsoft's "Windows API
#: sets" docs), by the start of their names
_WINDOWS_API_SETS = ("api-ms-win-", "ext-ms-win-")
#: Unix libraries a JDK loads from the system (the compression, TLS, font, X11 and sound libraries its
#: `java.desktop` and `java.base` link: make/autoconf/lib-*.m4), beyond `native_libraries`' C runtime
_UNIX = frozenset(
    {
        "z", "crypto", "ssl", "fontconfig", "png16", "jpeg", "gif", "x11", "xext", "xi", "xrender", "xtst",
        "xrandr", "xau", "xdmcp", "xcb", "asound", "cups", "gcc_s", "ffi", "selinux", "zstd", "lzma",
        "resolv", "util", "nss_files", "nss_dns",
    }
)  # fmt: skip
#: a file name's `lib` prefix and ending: `.so` with its version, `.dylib`, `.dll`, `.exe`
_NAME = re.compile(r"^(?:lib)?(?P<stem>.+?)(?:\.so(?:\.\d+)*|(?:\.\d+)*\.dylib|\.dll|\.exe)?$")


def is_library_image(image: str) -> bool:
    """Whether a frame in the image of that name is the JDK's, a runtime's it bundles or the system's."""
    if is_native_library(image, ""):
        return True  # the C runtime, the loader, macOS' `libsystem_*` (`native_libraries`)
    name = image.lower()
    if name.startswith(_WINDOWS_API_SETS):
        return True
    found = _NAME.match(name)
    stem = found["stem"] if found is not None else name
    return stem in _JDK or stem in _BUNDLED_RUNTIMES or stem in _WINDOWS or stem in _UNIX
