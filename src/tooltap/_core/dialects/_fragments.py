"""A call's argument text as it arrives: decoded pieces, or pieces still JSON-escaped.

A reducer's fast path appends fragments as they sit in the event (the body of a JSON
string, validated by its template) and they are unescaped once, when the text is
needed; the full path appends decoded ``str`` fragments. ``run`` is the open escaped
run (the last part, while it is one): a fast path may extend it in place, and count its
bytes in ``size``, as long as ``size`` stays within the limit (``add_raw``'s usual case).
``size`` counts characters, with escaped bytes as an upper bound until ``exact()``
unescapes them.
"""

from __future__ import annotations

from typing import Protocol, cast

from .._json import unescape

__all__ = ["Fragments", "append_escaped"]


class Fragments:
    """Ordered fragments; runs of escaped ones share one ``bytearray``."""

    __slots__ = ("escaped", "joined", "parts", "run", "size")

    def __init__(self) -> None:
        self.parts: list[str | bytearray] = []
        self.size = 0
        self.run: bytearray | None = None  # the last part, when it is an escaped run
        self.joined = 0  # parts before this one are each the fragments of one fork's time
        self.escaped = False  # an escaped run may be among the parts

    def __bool__(self) -> bool:
        return bool(self.parts)

    def fork(self) -> Fragments:
        """An independent copy: what either takes later leaves the other as it is (the
        open run, the only part extended in place, is copied; the rest is shared).

        The decoded fragments that came since the last fork are joined into one piece
        first (the text is the same): a stream's many small fragments are held as a few
        strings, not as one object each."""
        parts, joined = self.parts, self.joined
        if not self.escaped and len(parts) - joined > 1:
            parts[joined:] = ["".join(cast(list[str], parts[joined:]))]
        self.joined = len(parts)
        twin = Fragments.__new__(Fragments)
        twin.parts = parts[:]
        twin.size, twin.joined, twin.run = self.size, self.joined, None
        twin.escaped = self.escaped
        if self.run is not None:
            twin.run = twin.parts[-1] = bytearray(self.run)
        return twin

    def add(self, fragment: str) -> None:
        """Append a decoded fragment."""
        self.size += len(fragment)
        if fragment:
            self.parts.append(fragment)
            self.run = None

    def add_within(self, fragment: str, limit: int) -> bool:
        """Append a decoded fragment; False, and nothing appended, when it could take
        ``size`` past ``limit``: the caller then decides exactly (its ``add``)."""
        size = self.size + len(fragment)
        if size > limit:
            return False
        self.size = size
        if fragment:
            self.parts.append(fragment)
            self.run = None
        return True

    def add_raw(self, raw: bytes, limit: int) -> bool:
        """Append an escaped fragment (a JSON string body valid on its own); False, and
        nothing appended, when its bytes could take ``size`` past ``limit``: the caller
        then unescapes it and decides exactly."""
        size = self.size + len(raw)
        if size > limit:
            return False
        self.size = size
        if self.run is not None:
            self.run += raw
        elif raw:
            self.run = bytearray(raw)
            self.parts.append(self.run)
            self.escaped = True
        return True

    def exact(self) -> None:
        """Unescape every escaped run, so that ``size`` is the exact character count."""
        parts = self.parts
        for index, part in enumerate(parts):
            if type(part) is bytearray:
                parts[index] = unescape(part)
        self.size = sum(map(len, parts))
        self.run = None
        self.escaped = False

    def text(self) -> str:
        """The whole text (unescaped once and kept as one piece)."""
        parts = self.parts
        if len(parts) == 1 and type(parts[0]) is str:
            return parts[0]
        if bytearray in map(type, parts):  # escaped runs: unescaped first (else size is exact)
            self.exact()
        text = "".join(cast(list[str], parts))
        self.parts = [text] if text else []
        return text


class _Arguments(Protocol):
    """A call whose argument text a fast path extends (``PendingCall``, Anthropic's block)."""

    fragments: Fragments
    oversized: bool  # past the limit: fragments no longer kept

    def add(self, fragment: str, limit: int) -> None: ...


def append_escaped(call: _Arguments, raw: bytes, limit: int) -> None:
    """The fast paths' append of ``raw`` (a JSON string body, valid UTF-8) to ``call``'s
    arguments: ``Fragments.add_raw``'s usual case inline, else exactly near the limit."""
    fragments = call.fragments
    run, size = fragments.run, fragments.size + len(raw)
    if run is not None and size <= limit:
        fragments.size = size
        run += raw
    elif not call.oversized and not fragments.add_raw(raw, limit):
        call.add(unescape(raw), limit)  # near the limit: counted exactly
