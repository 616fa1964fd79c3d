"""What a JavaScript bundler's build puts in a frame that the next build changes: the content hash
in a bundle's file name and the minifier's mangled function names.

A bundle's file name carries a hash of its content so browsers cache it forever (webpack's
`[contenthash]`, Rollup's and Vite's `[hash]`): `main.3f2a1b9c.js`, `2.a1b2c3d4.chunk.js` (Create
React App), `index-DiwrgTda.js` (Vite), `_next/static/chunks/pages/index-5f1a2b3c4d5e6f70.js`
(Next.js). Every deploy renames every bundle, so a frame is identified by the name without it
(Sentry does the same: `generate_module` drops a name's ending `[-.][a-f0-9]{7,}`, its
`CLEAN_MODULE_RE`). Two shapes are recognised, each only as the last `-` or `.` part of a
`.js`/`.mjs`/`.cjs` file's name, so a name a human wrote (`user-settings.js`, `v2-api.js`,
`date-picker.js`) is never touched:
- hexadecimal (webpack, CRA, Next.js, Sentry's rule): at least 7 hex digits, one a decimal digit (a
  word such as `defaced` is all letters);
- Rollup's base64url hash (Rollup 3+, hence Vite: 8 characters of `[A-Za-z0-9_-]`; esbuild's is 8 of
  base32, `chunk-RLJ2RCJQ.js`): exactly 8, with a decimal digit, or an upper-case letter after the
  first character (`DiwrgTda`, `B3xQ_a1z`): a word is lower case or capitalised (`settings`,
  `Checkout`).

Minifiers (Terser, esbuild) rename every local and module-level function to the shortest free
name, `t`, `e`, `Xk`, and may rename them again at the next build; the names a program gives its
properties and methods are kept. Without source maps such a name identifies nothing (Sentry
trusts a minified frame's function name only once a source map restored it), so in a bundle
(a content-hashed or `.min.js` file) a function whose last name is one or two characters is
`MINIFIED`: the frame is still identified by its bundle. Longer mangled names (a scope with more
than about 3,500 names) are not recognised.
"""

from __future__ import annotations

import re

#: what a minified function contributes in place of its name
MINIFIED = "<minified>"
_SCRIPT = re.compile(r"^(?P<stem>.+?)(?P<ext>(?:\.(?:chunk|bundle))?\.[cm]?js)$")  # bundlers write lower case
_HEX_HASH = re.compile(r"^[0-9a-f]{7,64}$", re.IGNORECASE)
_ROLLUP_HASH = re.compile(r"^[A-Za-z0-9_-]{8}$")
_DIGIT = re.compile(r"\d")
_INNER_UPPER = re.compile(r"^.+[A-Z]")
_MINIFIED_FILE = re.compile(r"[.-]min\.[cm]?js$")
#: Firefox's marks of an anonymous function inside a named one (`init/<`, `init/<.then`)
_FIREFOX_INNER = re.compile(r"/<+")
_SHORT_NAME = re.compile(r"^[A-Za-z_$][\w$]?$")


def without_content_hash(name: str) -> str:
    """A file name without the content hash a bundler put in it (the name itself otherwise)."""
    script = _SCRIPT.match(name)
    if script is None:
        return name
    stem, ext = script["stem"], script["ext"]
    for separator in "-.":
        head, found, tail = stem.rpartition(separator)
        if found and head and _is_content_hash(tail):
            return head + ext
    # Rollup's base64url hash may itself hold `-` (`index-B-3xYz_a.js`): its last 9 characters
    if len(stem) > 9 and stem[-9] in "-." and _is_content_hash(stem[-8:]) and "-" in stem[-8:]:
        return stem[:-9] + ext
    return name


def _is_content_hash(part: str) -> bool:
    if _HEX_HASH.match(part):
        return _DIGIT.search(part) is not None
    if _ROLLUP_HASH.match(part):
        return _DIGIT.search(part) is not None or _INNER_UPPER.match(part) is not None
    return False


def is_bundle(name: str) -> bool:
    """Whether a file name is a build's bundle: content-hashed or minified (`app.min.js`)."""
    return without_content_hash(name) != name or _MINIFIED_FILE.search(name) is not None


def is_minified_name(function: str) -> bool:
    """Whether a bundle frame's function name is a minifier's: its last name (after the receiver,
    `e.n`, `Object.t`) has one or two characters."""
    last = _FIREFOX_INNER.sub("", function).rsplit(".", 1)[-1]
    return _SHORT_NAME.match(last) is not None
