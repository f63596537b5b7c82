"""Undoing a body's Content-Encoding (gzip, deflate) as it is read, never past the body's limit: one decoder under
every HTTP stack, so a page reads the same whichever one fetched it."""

from __future__ import annotations

import zlib

from .transport import Headers, NetworkError

# What the decoder undoes: what a stack that leaves decoding to it asks for
ACCEPT_ENCODING = "gzip, deflate"
# Members a gzip body may have (RFC 1952 allows any number: `cat a.gz b.gz`, a member per write). Each costs a
# new inflater (about 2.5 µs) for as little as 20 bytes of body, and empty ones give the body's limit no output
# to stop at: a flood of them would hold the event loop for as long as the server sends them.
MAX_MEMBERS = 10_000
_GZIP = 16 + zlib.MAX_WBITS
_MAGIC = b"\x1f\x8b"
# Bytes fed to a member that starts after another in the same piece: a window, not the rest of the piece, so
# many small members cost each their own size, not a copy of all that follows them (zlib's unused_data)
_WINDOW, _WINDOW_MAX = 64, 64 * 1024


def decoder_for(headers: Headers) -> BodyDecoder | None:
    """The decoder an answer's body needs; None when it has no Content-Encoding to undo. NetworkError for one
    that wasn't asked for (br, zstd, ...): read as it is, it would be a page of noise with no links."""
    coding = headers.get("Content-Encoding")
    if not coding:
        return None
    coding = coding.strip().lower()
    if coding in ("gzip", "x-gzip", "deflate"):
        return BodyDecoder(coding)
    if coding in ("", "identity"):
        return None
    raise NetworkError(f"bad response: body in '{coding[:40]}' encoding, which was not asked for", transient=False)


class BodyDecoder:
    """gzip (every member of it, as RFC 1952 reads it) or deflate (zlib-wrapped as the standard says, or raw as
    some servers send it), fed the body piece by piece. A stream that stops short of its end (its trailer
    missing, or cut further in) gives what it decoded so far, as browsers read it; bytes after the last member
    that start no other (zero padding, junk) are ignored, as gzip -d ignores them."""

    __slots__ = ("coding", "_inflate", "_gzip", "_sniff", "_held", "_members", "_over")

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._gzip = coding != "deflate"
        self._inflate = zlib.decompressobj(_GZIP if self._gzip else zlib.MAX_WBITS)
        self._sniff = not self._gzip  # deflate's first bytes say which of its two forms it is
        self._held = b""  # the last piece's final byte, too few to tell what starts there
        self._members = 1
        self._over = False  # past the end of the stream: the rest of the body is ignored

    def decode(self, data: bytes, room: int) -> bytes:
        """What data decodes to, up to room bytes (room >= 1). Fewer than room: all of data was used, and the rest
        of the body comes in the next calls; room: the body reached its limit here and is cut (a bomb stops here,
        whatever data would expand to)."""
        try:
            return self._decode(data, room)
        except zlib.error:
            raise NetworkError(f"bad response: body not decodable as {self.coding}", transient=False) from None

    def _decode(self, data: bytes, room: int) -> bytes:
        if self._over:
            return b""
        if self._held:
            data, self._held = self._held + data, b""
        inflate = self._inflate
        if inflate.eof:  # the last piece ended where a member did
            return self._after_member(data, b"", room)
        if self._sniff:
            if len(data) < 2:
                self._held = data
                return b""
            self._sniff = False
            try:
                out = inflate.decompress(data, room)
            except zlib.error:  # not zlib-wrapped: raw deflate
                inflate = self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                out = inflate.decompress(data, room)
        else:
            out = inflate.decompress(data, room)
        if inflate.eof and len(out) < room:
            return self._after_member(inflate.unused_data, out, room)
        return out

    def _after_member(self, rest: bytes, out: bytes, room: int) -> bytes:
        """out, then what rest (the bytes after a member's end) decodes to, up to room bytes in all."""
        if not self._gzip:  # a deflate stream is one: what follows it is ignored
            self._over = bool(rest)
            return out
        parts = [out]
        produced = len(out)
        view = memoryview(rest)
        pos = 0
        window = _WINDOW
        inflate = self._inflate
        while pos < len(view) and produced < room:
            if inflate.eof:
                start = bytes(view[pos : pos + 2])
                if start != _MAGIC:
                    if start == _MAGIC[:1]:  # the piece ends one byte into what may be a member
                        self._held = start
                    else:  # no member starts here
                        self._over = True
                    break
                self._members += 1
                if self._members > MAX_MEMBERS:
                    raise NetworkError(f"bad response: gzip body of more than {MAX_MEMBERS} members",
                                       transient=False)
                inflate = self._inflate = zlib.decompressobj(_GZIP)
                window = _WINDOW
            end = min(pos + window, len(view))
            piece = inflate.decompress(view[pos:end], room - produced)
            parts.append(piece)
            produced += len(piece)
            if inflate.eof:
                pos = end - len(inflate.unused_data)
            else:
                pos = end
                window = min(window * 2, _WINDOW_MAX)
        return b"".join(parts)
