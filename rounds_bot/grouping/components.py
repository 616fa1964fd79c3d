"""The fingerprint as a small tree of components, each saying whether it contributed and why not.

Modelled on Sentry's grouping components: a leaf carries a value; a node contributes when it is
marked so and at least one child contributes. The hash is computed from contributing leaves
only, so the tree is at once the recipe and its explanation ("why grouped").
"""

from __future__ import annotations

import hashlib
import weakref
from typing import TypeGuard

from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo, shared_memo

#: a rendered tree shows at most this many lines; the rest is summarised, never dropped silently
MAX_RENDERED_LINES = 120
_MAX_VALUE_CHARS = 160
#: stacks' rendered lines kept before that memo is cleared (never evicted piecemeal)
_STACK_MEMO_LIMIT = 4096
#: a stack is drawn again only while its component is alive and drawn in another tree (a candidate memo's
#: fingerprint drawn again, a stack two readings share): a first round of 200k records and 20k bugs draws
#: 13.5k stacks and finds 290 drawn already with 4 MB, 100 with 1 MB
_STACK_LINES_BUDGET = 1 * MB
#: the stack held weakly: one only this memo kept alive could never be drawn again, as no tree holds it
_STACK_LINES: BoundedMemo[tuple[int, int], tuple[weakref.ref[Component], tuple[str, ...]]] = shared_memo(
    _STACK_MEMO_LIMIT,
    _STACK_LINES_BUDGET,
    lambda _, found: OVERHEAD + sum(len(line) + 60 for line in found[1]),
)


class Component:
    """One node of the tree. Immutable by convention; `effective` is worked out once."""

    __slots__ = ("__weakref__", "children", "contributes", "effective", "hint", "name", "serialized", "value")

    effective: bool

    def __init__(
        self,
        name: str,
        value: str | None = None,
        contributes: bool = True,
        hint: str | None = None,
        children: tuple[Component, ...] = (),
    ) -> None:
        self.name = name
        self.value = value
        self.contributes = contributes
        self.hint = hint
        self.children = children
        #: this component's part of the hash input, once worked out (components are immutable)
        self.serialized: str | None = None
        #: True when this component really enters the hash: it contributes, and it is a leaf
        #: with a value or a node with at least one effective child
        effective = False
        if contributes:
            if children:
                for child in children:
                    if child.effective:
                        effective = True
                        break
            else:
                effective = value is not None
        self.effective = effective

    def __repr__(self) -> str:
        return f"Component({self.name!r}, {self.value!r}, contributes={self.contributes}, hint={self.hint!r})"


def leaf(name: str, value: str | None, hint: str | None = None) -> Component:
    return Component(name, value, hint is None, hint)


def node(
    name: str, *children: Component | None, value: str | None = None, hint: str | None = None
) -> Component:
    """A component over its children (None children, for optional parts, are left out)."""
    kept = children if _all_present(children) else tuple(c for c in children if c is not None)
    return Component(name, value, hint is None, hint, kept)


def _all_present(children: tuple[Component | None, ...]) -> TypeGuard[tuple[Component, ...]]:
    return None not in children


def hash_tree(root: Component, version: str) -> str:
    """sha256 over the version and every contributing leaf, with the shape of the tree."""
    return hashlib.sha256((version + _serialized(root)).encode("utf-8", "surrogatepass")).hexdigest()


def _serialized(component: Component) -> str:
    # Length-prefixed, so no value can be mistaken for structure.
    text = component.serialized
    if text is None:
        if not component.effective:
            text = ""
        elif component.children:
            name = component.name
            parts = [c.serialized if c.serialized is not None else _serialized(c) for c in component.children]
            text = f"{len(name)}:{name}(" + "".join(parts) + ")"
        else:
            name, value = component.name, component.value or ""
            text = f"{len(name)}:{name}={len(value)}:{value};"
        component.serialized = text
    return text


def render(root: Component) -> str:
    """The tree as indented text: `+` contributes, `-` does not (with the reason)."""
    lines: list[str] = []
    _render(root, 0, lines)
    if len(lines) > MAX_RENDERED_LINES:
        hidden = len(lines) - MAX_RENDERED_LINES + 1
        lines = [*lines[: MAX_RENDERED_LINES - 1], f"  ... {hidden} more lines"]
    return "\n".join(lines)


def _render(component: Component, depth: int, lines: list[str]) -> None:
    if component.name == "stacktrace":
        # a stack is shared by every fingerprint of its frames (see `fingerprint`): drawn once
        # per depth, kept with a weak reference to the component it draws (its id is not reused while it
        # is alive, and the reference tells whether it is)
        key = (id(component), depth)
        found = _STACK_LINES.get(key)
        if found is None or found[0]() is not component:
            drawn: list[str] = []
            _render_component(component, depth, drawn)
            found = _STACK_LINES.put(key, (weakref.ref(component), tuple(drawn)))
        lines.extend(found[1])
        return
    _render_component(component, depth, lines)


def _render_component(component: Component, depth: int, lines: list[str]) -> None:
    mark = "+" if component.effective else "-"
    text = f"{'  ' * depth}{mark} {component.name}"
    if component.value is not None:
        text += f": {_short(component.value)}"
    if component.name == "frame":
        context = next((c for c in component.children if c.name == "context-line" and c.effective), None)
        if context is not None:
            text += f'  "{_short(context.value or "")}"'
    if component.hint:
        text += f"  ({component.hint})"
    elif not component.effective and component.children:
        text += "  (nothing below contributes)"
    lines.append(text)
    if component.name == "frame" or not component.effective:
        return  # a frame is one line; an ignored subtree is summed up by its own line
    for child in _folded(component.children):
        if isinstance(child, str):
            lines.append(f"{'  ' * (depth + 1)}- {child}")
        else:
            _render(child, depth + 1, lines)


def _folded(children: tuple[Component, ...]) -> list[Component | str]:
    """Runs of three or more ignored leaf-like siblings with one reason become one line."""
    out: list[Component | str] = []
    index = 0
    while index < len(children):
        child = children[index]
        end = index
        if not child.effective and child.hint:
            while (
                end + 1 < len(children)
                and not children[end + 1].effective
                and children[end + 1].hint == child.hint
                and children[end + 1].name == child.name
            ):
                end += 1
        if end - index >= 2:
            out.append(f"{end - index + 1} {child.name}s  ({child.hint})")
        else:
            out.extend(children[index : end + 1])
        index = end + 1
    return out


def _short(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= _MAX_VALUE_CHARS else value[: _MAX_VALUE_CHARS - 3] + "..."
