"""Image fixtures of the loopback file server: tiny valid images built in code (pure, built once)."""

from __future__ import annotations

import struct
import zlib
from functools import cache

BIG_FILE_BYTES = 10 * 1024 * 1024 + 1  # over "10 MB" whichever way a doc counts it


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_IHDR_1X1 = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))  # 1x1 RGBA


@cache
def tiny_png() -> bytes:
    pixel = b"\x00" + b"\xd9\x77\x57\xff"  # filter byte + one RGBA pixel
    return PNG_SIGNATURE + PNG_IHDR_1X1 + _png_chunk(b"IDAT", zlib.compress(pixel)) + _png_chunk(b"IEND", b"")


def _jpeg_segment(marker: int, payload: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload


@cache
def tiny_jpeg() -> bytes:
    """A baseline 1x1 grey JPEG: one 8x8 block whose DCT is all zero (DC diff 0, then EOB)."""
    one_code = bytes([1] + [0] * 15)  # one Huffman code, of length 1, for symbol 0x00
    return b"".join(
        [
            b"\xff\xd8",
            _jpeg_segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"),
            _jpeg_segment(0xDB, b"\x00" + b"\x01" * 64),
            _jpeg_segment(0xC0, struct.pack(">BHHB", 8, 1, 1, 1) + b"\x01\x11\x00"),
            _jpeg_segment(0xC4, b"\x00" + one_code + b"\x00"),  # DC table 0: category 0
            _jpeg_segment(0xC4, b"\x10" + one_code + b"\x00"),  # AC table 0: EOB
            _jpeg_segment(0xDA, b"\x01\x01\x00\x00\x3f\x00"),
            b"\x3f",  # bits 0 (DC) 0 (EOB), padded with ones
            b"\xff\xd9",
        ]
    )


@cache
def tiny_gif() -> bytes:
    header = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    return header + image + b"\x3b"


@cache
def tiny_webp() -> bytes:
    vp8l = b"\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"[:13]  # lossless 1x1 bitstream
    chunk = b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l + b"\x00" * (len(vp8l) % 2)
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


_NOT_AN_IMAGE = b"This is plain text, not an image.\n"


def static_files() -> dict[str, tuple[bytes, str]]:
    """name -> (body, content-type) of the fixed fixtures."""
    return {
        "tiny.png": (tiny_png(), "image/png"),
        "tiny.jpg": (tiny_jpeg(), "image/jpeg"),
        "tiny.gif": (tiny_gif(), "image/gif"),
        "tiny.webp": (tiny_webp(), "image/webp"),
        "png-as-text.txt": (tiny_png(), "text/plain"),
        "not-an-image.png": (_NOT_AN_IMAGE, "image/png"),
    }
