"""What the memos holding stack frames charge for the objects their entries share.

Occurrences of different problems share most of their frames (a framework's, a test runner's, the app's
entry points), and the memos that keep what is worked out from a trace (its parse, its reading, its
candidate, each stack's component) hold the same frame objects and the same components made of them, entry
after entry. Charging each entry for every frame it holds counted one frame hundreds of times: 4,000
Defects4J traces were estimated at 208 MB where the memos held 13 MB, and the memos were cleared a hundred
times a run. So an entry pays for what it alone holds (its key's tuples, the roles made for it, the nodes of
its fingerprint tree above its stacks), and, through its memo's `memo.Ledger`, for each frame, frame
component and stack component it holds only when no entry the memo holds has paid for that object yet.

The costs below bound the objects' deep size (a test compares each memo's estimate with the deep size of
everything it holds, on the grouping corpus and on the same traces with long names in wide characters). A
component's text is counted as it will be held once the tree is hashed: `components._serialized` keeps, on
every node, its part of the hash input, which holds the text of everything below it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rounds_bot.grouping.components import Component
from rounds_bot.grouping.memo import FrameText, Ledger, frame_text, text_bytes

#: a frame object, its attributes' dictionary and its strings' headers (measured: 450 to 560 bytes)
FRAME_BYTES = 512
#: a component: its object, its children's tuple, and the headers of its value and serialized text
NODE_BYTES = 224
#: what a node's serialized text adds to its children's, beyond its name: the length prefix and brackets
_SERIAL_OVERHEAD = 16


def frames_cost(frames: Iterable[FrameText], ledger: Ledger) -> int:
    """The frames a memo has not paid for yet: each frame object with its text."""
    once = ledger.once
    return sum(once(frame, FRAME_BYTES + frame_text(frame)) for frame in frames)


def stack_cost(stack: Component, ledger: Ledger) -> int:
    """A stack's component (`exception_chain._stack_component`, shared by every fingerprint of its frames)
    and its frames' components, those a memo has not paid for yet."""
    if not ledger.once(stack, 1):
        return 0
    size = NODE_BYTES + 8 * len(stack.children) + text_bytes(stack.value) + text_bytes(stack.hint)
    serial = wide = 0
    for child in stack.children:
        child_cost, child_serial, child_wide = _subtree(child)
        size += ledger.once(child, child_cost)
        serial += child_serial
        wide |= child_wide
    if not stack.effective:
        return size  # its serialized text is the empty string
    return size + _serial_bytes(serial + len(stack.name) + _SERIAL_OVERHEAD, wide)


def tree_cost(tree: Component, ledger: Ledger) -> int:
    """A fingerprint's tree: its nodes above its stacks (each entry's own: they are made per fingerprint,
    and each keeps the serialized text of all below it), and its stacks, those not paid for yet."""
    if tree.name == "stacktrace":
        return stack_cost(tree, ledger)
    size = NODE_BYTES + 8 * len(tree.children) + text_bytes(tree.value) + text_bytes(tree.hint)
    serialized = tree.serialized
    if serialized is not None:
        size += text_bytes(serialized)
    else:  # not hashed yet: it will be
        _, serial, wide = _subtree(tree)
        size += _serial_bytes(serial, wide)
    for child in tree.children:
        size += tree_cost(child, ledger)
    return size


def _subtree(component: Component) -> tuple[int, int, int]:
    """(cost, serialized characters, whether wide) of a component and everything below it."""
    size = NODE_BYTES + 8 * len(component.children) + text_bytes(component.value) + text_bytes(component.hint)
    if not component.children:
        return _leaf(component, size)
    serial = len(component.name) + _SERIAL_OVERHEAD
    wide = 0
    for child in component.children:
        child_cost, child_serial, child_wide = _subtree(child)
        size += child_cost
        serial += child_serial
        wide |= child_wide
    if not component.effective:
        return size, 0, 0  # its serialized text is the empty string
    return size + _serial_bytes(serial, wide), serial, wide


def _leaf(component: Component, size: int) -> tuple[int, int, int]:
    if not component.effective:
        return size, 0, 0  # its serialized text is the empty string
    value = component.value or ""
    serial = len(component.name) + len(value) + _SERIAL_OVERHEAD
    wide = 0 if value.isascii() else 1
    return size + _serial_bytes(serial, wide), serial, wide


def _serial_bytes(characters: int, wide: int) -> int:
    """A serialized text of `characters`: four bytes each once one is beyond ASCII."""
    return 4 * characters if wide else characters
