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


def is_native_library(image: str, path: str) -> bool:
    """Whether a native frame in `image` (its name; "" when it names none) at source `path` ("" when none)
    is the system's, a compiler's or a sanitizer's code."""
    return (
        path.startswith(_PATHS)
        or any(part in path for part in _PARTS)
        or image.startswith(_IMAGES)
        or image in _APPLE_FRAMEWORKS
    )
