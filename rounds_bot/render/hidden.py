"""What `commands.grammar` takes out of a comment before it reads its lines for commands: HTML comments and
HTML elements whose content GitHub shows as code or not at all (`<pre>`, `<code>`, `<textarea>`, `<script>`,
`<style>`; CommonMark 0.31 §4.6 "HTML blocks", and GitHub's HTML sanitiser, which drops script and style).

It lives here, below both, so that the parser and `markdown.neutralise` (which must know which lines the
parser reads as code) share one definition: a stretch taken out can take a fence line with it, after which
the parser reads as text a line that was code in the text as written.
"""

from __future__ import annotations

import re

#: an HTML comment, or one left open, which hides the rest of the text (CommonMark 0.31 §6.6 "Raw HTML")
HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
#: an element whose content is code or hidden, up to its closing tag or the end of the text
HTML_CODE = re.compile(
    r"<(?P<tag>pre|code|textarea|script|style)\b[^>]{0,1000}>.*?(?:</(?P=tag)\s*>|\Z)",
    re.DOTALL | re.IGNORECASE,
)


def without_hidden(text: str) -> str:
    """`text` as the command parser reads it: HTML comments, then HTML code elements, taken out."""
    return HTML_CODE.sub("", HTML_COMMENT.sub("", text))


def lines_read_as_written(text: str) -> int:
    """How many of the first lines of `text` (split at `\\n`) the command parser reads exactly as written,
    line break included: those wholly before the first character `without_hidden` takes out (whether a line
    is code depends only on the lines up to it, so these read as code or text as they do as written)."""
    first = _first_hidden(text)
    return text.count("\n") + 1 if first is None else text.count("\n", 0, first)


def _first_hidden(text: str) -> int | None:
    """Where the first stretch `without_hidden` takes out starts, or None when it takes out nothing."""
    comment = HTML_COMMENT.search(text)
    # code elements are looked for once the comments are out, as the parser does; one that starts before
    # the first comment starts at the same place in the text as written
    code = HTML_CODE.search(HTML_COMMENT.sub("", text) if comment else text)
    starts = [match.start() for match in (comment, code) if match is not None]
    return min(starts, default=None)


__all__ = ["HTML_CODE", "HTML_COMMENT", "lines_read_as_written", "without_hidden"]
