"""Which native frames are the system's, the compilers' or a sanitizer's code, not the app's.

    is_native_library(image, path) -> bool    a frame's image (`libc.so.6`) or source path says so
    NATIVE_TEST_FILES                        the source paths of native test code

A native frame names its source file when it has debug information, else the image (executable or shared
library) it is in. The system's code is in the system's headers and libraries and in the C++ standard
libraries; glibc's debug information names its sources relative to its build (`../sysdeps/...`); the
sanitizers' runtime is compiler-rt (LLVM) or libsanitizer (GCC). Not all of `/usr/`: container images build
apps in `/usr/src/app`.
"""

from __future__ import annotations

import re

#: native test code, as GoogleTest's and Catch2's (`*_test.cc`, `*_unittest.cc`, `tests/`) and XCTest's
#: (`*Tests.swift`) projects name it
NATIVE_TEST_FILES = re.compile(
    r"(?:^|/)tests?/|_(?:unit)?tests?\.(?:cc?|cpp|cxx|mm?)$|Tests?\.(?:swift|mm?)$"
)
_PATHS = (
    "/usr/include/", "/usr/lib/", "/usr/lib64/", "/usr/local/include/", "/lib/", "/lib64/",
    "/System/Library/", "../sysdeps/", "../csu/", "../nptl/", "./nptl/", "../stdlib/", "./stdlib/",
    "../string/", "../malloc/", "./malloc/", "../signal/",
)  # fmt: skip
_PARTS = ("/compiler-rt/", "/libsanitizer/", "/libstdc++-v3/", "/libcxx/", "/libcxxabi/")
#: the system's and the runtimes' images, by the start of their names
_IMAGES = (
    "libc.", "libc-", "libc++", "libstdc++", "libgcc", "libasan", "libubsan", "libtsan", "liblsan",
    "libmsan", "libclang_rt", "libpthread", "libm.", "libdl.", "librt.", "ld-linux", "ld-musl",
    "libsystem_", "libswift", "libdyld", "libobjc", "libdispatch",
)  # fmt: skip
#: Apple's frameworks, as its crash reports name their images
_APPLE_FRAMEWORKS = frozenset(
    {"CoreFoundation", "Foundation", "UIKitCore", "UIKit", "AppKit", "GraphicsServices", "HIToolbox", "dyld"}
)

#: where Android's own images are: its read-only partitions (AOSP's "Partitions overview": `/system`,
#: `/system_ext`, `/product`, `/vendor`, `/odm`), the APEX modules mounted under `/apex` (the C library, ART),
#: and the boot image ART compiles on the device; an app's are under `/data/app/` (Sentry's enhancers class
#: `/system/**`, `/vendor/**` and `/apex/com.android.*/lib*/**` as the system's, `newstyle@2023-01-11`)
_ANDROID_PATHS = (
    "/system/", "/system_ext/", "/product/", "/vendor/", "/odm/", "/apex/", "/data/dalvik-cache/",
    "/data/misc/apexdata/",
)  # fmt: skip
#: the kernel's virtual shared object, as Android's tombstones (`/proc/<pid>/maps`) and glibc name it
_VDSO = frozenset({"[vdso]", "linux-vdso.so.1", "linux-gate.so.1"})
#: Android's platform libraries by name, for a report that prints no path (a sanitizer's `(libart.so+0x...)`):
#: ART, the UI renderer, the framework's native half and its support libraries (Sentry's enhancers:
#: `**/libart.so`; the graphics stack, `**/libGLES*.so`)
_ANDROID_IMAGES = frozenset(
    {
        "libart.so", "libartbase.so", "libhwui.so", "libandroid_runtime.so", "libbinder.so", "libutils.so",
        "libbase.so", "libcutils.so", "liblog.so", "libgui.so", "libui.so", "libvulkan.so", "libandroid.so",
        "libnativeloader.so", "libjavacore.so", "libopenjdk.so", "linker", "linker64",
    }
)  # fmt: skip
_ANDROID_IMAGE_PREFIXES = ("libGLES", "libEGL")


#: a source file's endings: a debugger's frame names its source (`at /system/src/parse.c:12`), not an image
_SOURCE_SUFFIXES = (
    ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".m", ".mm", ".rs", ".go", ".java", ".kt", ".zig",
)  # fmt: skip


#: ART's JIT code cache, as a tombstone names its mapping (the image's name, after the last `/`): a memfd
#: since Android 10 (`/memfd:jit-cache (deleted)`, the zygote's `/memfd:jit-zygote-cache`), an anonymous
#: mapping (`[anon:dalvik-jit-code-cache]`, `[anon_shmem:dalvik-zygote-jit-code-cache]`) or ashmem
#: (`/dev/ashmem/dalvik-jit-code-cache`) before (AOSP `art/runtime/jit/jit_memory_region.cc` names them)
_ANDROID_JIT = re.compile(
    r"^(?:memfd:|\[anon(?:_shmem)?:)?(?:dalvik-)?(?:zygote-)?jit-(?:zygote-)?(?:code-)?cache\]?$"
)


def is_android_jit(image: str) -> bool:
    """Whether an image of that name is ART's JIT code cache: code the runtime compiled in this process."""
    return "jit-" in image and _ANDROID_JIT.match(image) is not None


def is_android_system_image(path: str) -> bool:
    """Whether a native frame's image `path` (a tombstone's) is one of Android's system images or the
    kernel's; a source file's path under such a folder on another system is none."""
    if path in _VDSO:
        return True
    return path.startswith(_ANDROID_PATHS) and not path.lower().endswith(_SOURCE_SUFFIXES)


def is_android_library(image: str) -> bool:
    """Whether an image of that name is Android's platform library or the kernel's vDSO."""
    return image in _ANDROID_IMAGES or image in _VDSO or image.startswith(_ANDROID_IMAGE_PREFIXES)


def is_native_library(image: str, path: str) -> bool:
    """Whether a native frame in `image` (its name; "" when it names none) at source `path` ("" when none)
    is the system's, a compiler's or a sanitizer's code."""
    return (
        path.startswith(_PATHS)
        or any(part in path for part in _PARTS)
        or image.startswith(_IMAGES)
        or image in _APPLE_FRAMEWORKS
    )
