"""A model's prose for an issue: its paragraphs escaped, its top-level fenced code blocks kept as code blocks.

A diagnosis's root cause and suggested fix often carry code (the line to change, a guard to add) in a fenced
code block. Escaped line by line (`markdown.escape_block`), such a block would show its backticks as text
and lose the indentation the code needs to mean what it says. Top-level fences are read as CommonMark reads
them (CommonMark 0.31, §4.5 "Fenced code blocks"; `render.fences`), and each block is written again by
rounds as a backtick block longer than any run of backticks inside, so its content is kept exactly and
cannot close it: inside a code block GitHub renders no mention, reference, link, image, HTML or math
("Autolinked references and URLs": references in code are not linked), and rounds reads no command
(`commands.grammar.command_lines`). A fence is read wherever it is indented at most three spaces, so one
in a list item (a `- step` line, then a fence indented two spaces) becomes a code block of its own after
the item, as rounds' command parser reads it too; one in a block quote (after `>`) is prose, escaped as
everything outside the blocks is.
"""

from __future__ import annotations

import re

from markupsafe import Markup

from rounds_bot.render import fences
from rounds_bot.render import markdown as md

#: the languages a block keeps as its info string (GitHub highlights by it): ordinary programming, config and
#: data languages, by their names and usual aliases in GitHub Linguist's `languages.yml` (the list GitHub
#: highlights from). Any other word is dropped, as GitHub DRAWS some blocks instead of showing their text
#: (`math`, `mermaid`, `geojson`, `topojson`, `stl`: docs.github.com, "Writing mathematical expressions",
#: "Creating diagrams"), which would let the model draw what it likes in rounds' issue.
_LANGUAGE_NAMES = """
    python py python3 py3 pycon pytb javascript js node mjs cjs jsx typescript ts tsx java kotlin kt scala
    groovy gradle go golang rust rs c h cpp c++ cxx cc hpp hxx c# csharp cs f# fsharp objective-c objc
    objectivec obj-c objective-c++ objc++ swift ruby rb erb php perl pl raku lua r dart elixir ex exs erlang
    erl haskell hs ocaml ml clojure clj cljs julia jl zig nim crystal vb vbnet vb.net visual-basic
    powershell ps1 pwsh bash sh shell zsh fish ksh console shell-session shellsession bat batch cmd sql
    postgresql psql pgsql mysql plsql tsql sqlite graphql gql json jsonc json5 jsonl ndjson yaml yml toml
    ini cfg conf properties env dotenv xml html htm xhtml css scss sass less diff patch dockerfile docker
    containerfile makefile make cmake nginx apacheconf hcl terraform tf protobuf proto thrift avro text txt
    plaintext log csv tsv elm vue svelte solidity sol asm nasm wasm wat fortran cobol pascal delphi matlab
    octave prolog lisp scheme racket elisp emacs-lisp vim viml awk sed http jinja django twig handlebars hbs
    haml pug mustache liquid regex nix starlark bzl bazel gn cue jsonnet rego kusto promql logql
"""
_LANGUAGES = frozenset(_LANGUAGE_NAMES.split())


def escape_prose(text: str, limit: int | None = None) -> Markup:
    """Untrusted prose as Markdown: paragraphs escaped (`markdown.escape_block`), top-level fenced code
    blocks kept as inert ``` blocks with their lines, indentation and tabs exactly. Cut to `limit` characters
    of text first, as `escape_block` cuts: a block the cut (or the model) left open ends where the text ends,
    as CommonMark ends it, and is closed."""
    # a tab inside code is part of it (gofmt indents with tabs) and harmless there; outside, `escape_block`
    # makes it a space as before
    plain = "\t".join(md.visible(piece) for piece in text.split("\t"))
    if limit is not None and len(plain) > limit:
        plain = plain[: max(limit - 1, 0)].rstrip() + "…"
    parts: list[str] = []
    prose: list[str] = []
    lines = plain.split("\n")
    at = 0
    while at < len(lines):
        opening = fences.OPENER.fullmatch(lines[at])
        if opening is None:
            prose.append(lines[at])
            at += 1
            continue
        parts.append(str(md.escape_block("\n".join(prose))))
        prose = []
        end = fences.closing(lines, at + 1, opening["fence"])
        parts.append(_block(lines[at + 1 : end], len(opening["indent"]), opening["info"]))
        at = end + 1
    parts.append(str(md.escape_block("\n".join(prose))))
    return Markup("\n\n".join(part for part in parts if part))


def _block(content: list[str], indent: int, info: str) -> str:
    """A backtick block of `content` that nothing in it can close (`fences.fence_for`); the opener's
    indentation taken off each line as CommonMark does (up to that many spaces)."""
    unindented = "\n".join(re.sub(rf"^ {{0,{indent}}}", "", line) if indent else line for line in content)
    fence = fences.fence_for(unindented)
    return f"{fence}{_language(info)}\n{unindented}\n{fence}"


def _language(info: str) -> str:
    """The info string's first word, lower-cased, when it names an ordinary language (`_LANGUAGES`); else
    nothing, and the block is plain code."""
    words = info.split()
    word = words[0].lower() if words else ""
    return word if word in _LANGUAGES else ""


__all__ = ["escape_prose"]
