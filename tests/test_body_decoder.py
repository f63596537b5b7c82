"""The body decoder every HTTP stack reads gzip and deflate bodies with: fed in pieces split anywhere, as bodies
come off a socket, it gives what gzip.decompress gives, and never more than the room it is given."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable

import pytest
from multidict import CIMultiDict

from linkhound.body_decoder import MAX_MEMBERS, BodyDecoder, decoder_for
from linkhound.transport import NetworkError

FIRST = b"<html><body>" + b"".join(b'<a href="/a%d">a</a>' % i for i in range(40))
SECOND = b"".join(b'<a href="/b%d">b</a>' % i for i in range(40)) + b"</body></html>"
TWO_MEMBERS = gzip.compress(FIRST) + gzip.compress(SECOND)


def decode(coding: str, pieces: Iterable[bytes], room: int = 1 << 30) -> bytes:
    """The body as a stack reads it: each piece decoded with the room left under the limit."""
    decoder = BodyDecoder(coding)
    out = b""
    for piece in pieces:
        out += decoder.decode(piece, room - len(out))
        if len(out) >= room:
            break
    return out


def split_at(data: bytes, *cuts: int) -> list[bytes]:
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def test_two_gzip_members_decode_to_both_wherever_the_pieces_split() -> None:
    for cut in range(len(TWO_MEMBERS) + 1):
        assert decode("gzip", split_at(TWO_MEMBERS, cut)) == FIRST + SECOND, cut
    assert decode("gzip", [bytes([b]) for b in TWO_MEMBERS]) == FIRST + SECOND


def test_many_gzip_members_in_one_piece_decode_in_order() -> None:
    parts = [b"<p>%d</p>" % i * (i % 7) for i in range(500)]  # empty ones among them
    body = b"".join(gzip.compress(p) for p in parts)
    assert decode("gzip", [body]) == b"".join(parts) == gzip.decompress(body)


@pytest.mark.parametrize("tail", [b"\0" * 10, b"garbage after the member", b"\x1f", b"\x1f\x00junk"])
def test_bytes_after_the_last_member_that_start_no_member_are_ignored(tail: bytes) -> None:
    body = TWO_MEMBERS + tail
    for cut in (len(TWO_MEMBERS) - 1, len(TWO_MEMBERS), len(TWO_MEMBERS) + 1, len(body)):
        assert decode("gzip", split_at(body, cut)) == FIRST + SECOND


def test_junk_after_the_end_is_never_read_as_a_member_later() -> None:
    # past the end, a gzip magic further on (in junk) starts nothing: the rest of the body is ignored
    decoder = BodyDecoder("gzip")
    assert decoder.decode(gzip.compress(FIRST) + b"junk", 1 << 20) == FIRST
    assert decoder.decode(b"\x1f\x8bnot a member at all", 1 << 20) == b""


@pytest.mark.parametrize("cut", [4, 8, 100])
def test_a_gzip_stream_cut_short_gives_what_it_decoded_so_far(cut: int) -> None:
    whole = gzip.compress(FIRST + SECOND)
    body = whole[:-cut]
    expected = zlib.decompressobj(31).decompress(body)
    assert decode("gzip", split_at(body, len(body) // 2)) == expected
    if cut <= 8:  # only the trailer (CRC and length) is missing: the content is whole
        assert expected == FIRST + SECOND


@pytest.mark.parametrize("body", [
    b"not gzipped at all",
    gzip.compress(FIRST)[:-8] + b"\0\0\0\0" + gzip.compress(FIRST)[-4:],  # a CRC that doesn't match
    gzip.compress(FIRST) + gzip.compress(SECOND)[:-8] + b"\0\0\0\0\0\0\0\0",  # the second member's
], ids=["not-gzip", "bad-crc", "second-member-bad-crc"])
def test_a_gzip_body_that_is_not_gzip_is_a_bad_response(body: bytes) -> None:
    with pytest.raises(NetworkError) as e:
        decode("gzip", [body])
    assert e.value.reason == "bad response: body not decodable as gzip" and not e.value.transient


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS], ids=["zlib-wrapped", "raw"])
def test_deflate_of_either_form_decodes_even_from_a_first_piece_of_one_byte(wbits: int) -> None:
    z = zlib.compressobj(6, zlib.DEFLATED, wbits)
    body = z.compress(FIRST) + z.flush()
    for cut in (1, 2, 3, len(body) // 2):
        assert decode("deflate", split_at(body, cut)) == FIRST, cut
    assert decode("deflate", split_at(body + b"after the end", 1)) == FIRST


def test_a_multi_member_bomb_gives_no_more_than_its_room() -> None:
    member = zlib.compressobj(9, zlib.DEFLATED, 31)
    one = member.compress(bytes(4 << 20)) + member.flush()  # 4 MiB of zeros in about 4 KiB
    bomb = one * 64  # 256 MiB
    decoder = BodyDecoder("gzip")
    out = decoder.decode(bomb, 10_000_001)
    assert len(out) == 10_000_001 and out == bytes(10_000_001)
    # and across pieces, members cut anywhere
    assert len(decode("gzip", [bomb[i : i + 1000] for i in range(0, len(bomb), 1000)], room=9_000_001)) == 9_000_001


def test_a_flood_of_empty_members_is_a_bad_response() -> None:
    empty = gzip.compress(b"")
    assert decode("gzip", [empty * MAX_MEMBERS]) == b""
    with pytest.raises(NetworkError, match=f"gzip body of more than {MAX_MEMBERS} members"):
        decode("gzip", [empty * MAX_MEMBERS, empty])


def test_decoder_for_a_coding_not_asked_for_is_a_bad_response() -> None:
    assert decoder_for(CIMultiDict()) is None
    assert decoder_for(CIMultiDict({"Content-Encoding": " identity "})) is None
    for coding in ("gzip", "X-Gzip", "deflate"):
        decoder = decoder_for(CIMultiDict({"Content-Encoding": coding}))
        assert decoder is not None and decoder.coding == coding.lower()
    with pytest.raises(NetworkError, match="body in 'br' encoding, which was not asked for"):
        decoder_for(CIMultiDict({"Content-Encoding": "br"}))
