"""The one place pictures are decoded: every common format scales down; hostile bytes are a reason.

Hostile files are real bytes made here: PNG headers claiming billions of pixels over a few bytes
of data (a decompression bomb), truncated and corrupted JPEGs, an EPS (which Pillow would hand to
Ghostscript), text and noise named like images. Each must come back as `Unreadable` with a short
reason, quickly and without the pixels it claims ever being allocated.
"""

from __future__ import annotations

import io
import resource
import struct
import time
import zlib

import pytest
from helpers.pictures import scene
from PIL import Image

from handler.images.thumbnail import (
    LONG_SIDE,
    MAX_DECODED_PIXELS,
    MAX_IMAGE_BYTES,
    MAX_THUMBNAIL_BYTES,
    Unreadable,
    thumbnail,
)


def _encoded(picture: Image.Image, image_format: str, **options: object) -> bytes:
    out = io.BytesIO()
    picture.save(out, image_format, **options)
    return out.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def claimed_png(width: int, height: int) -> bytes:
    """A valid PNG header claiming `width` x `height` RGB pixels, over one compressed row of data."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\0" * (1 + 3 * min(width, 4096)), 9)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


def _with_jpeg_size(content: bytes, width: int, height: int) -> bytes:
    """The JPEG with its frame header (SOF0) saying `width` x `height`: the data stays the small one's."""
    at = content.index(b"\xff\xc0") + 5
    return content[:at] + struct.pack(">HH", height, width) + content[at + 4 :]


PHOTO = scene(640, 480, [("person", 100, 80, 220, 400), ("car", 300, 250, 600, 420)])


@pytest.mark.parametrize(
    ("image_format", "mode"),
    [
        ("JPEG", "RGB"),
        ("PNG", "RGBA"),
        ("PNG", "P"),
        ("PNG", "I;16"),
        ("WEBP", "RGB"),
        ("BMP", "RGB"),
        ("GIF", "P"),
        ("TIFF", "CMYK"),
        ("JPEG", "CMYK"),
        ("PNG", "LA"),
    ],
)
def test_every_common_format_and_mode_scales_down_to_a_small_jpeg(image_format: str, mode: str) -> None:
    picture = PHOTO.convert(mode) if mode != "I;16" else PHOTO.convert("L").convert("I;16")
    small = thumbnail(_encoded(picture, image_format))
    assert (small.width, small.height) == (640, 480)
    decoded = Image.open(io.BytesIO(small.jpeg))
    assert decoded.format == "JPEG" and decoded.mode == "RGB"
    assert decoded.size == (LONG_SIDE, LONG_SIDE * 480 // 640)
    assert len(small.jpeg) <= MAX_THUMBNAIL_BYTES


def test_a_small_picture_is_never_enlarged_and_a_tall_one_keeps_its_aspect() -> None:
    tiny = thumbnail(_encoded(PHOTO.resize((40, 30)), "PNG"))
    assert Image.open(io.BytesIO(tiny.jpeg)).size == (40, 30)
    tall = thumbnail(_encoded(PHOTO.resize((200, 1000)), "JPEG"))
    assert Image.open(io.BytesIO(tall.jpeg)).size == (60, LONG_SIDE)


def test_an_exif_turned_photo_is_drawn_upright_with_its_upright_size() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # the camera was held a quarter turn: shown rotated 90 degrees clockwise
    small = thumbnail(_encoded(PHOTO, "JPEG", exif=exif.tobytes()))
    assert (small.width, small.height) == (480, 640)
    assert Image.open(io.BytesIO(small.jpeg)).size == (LONG_SIDE * 480 // 640, LONG_SIDE)


@pytest.mark.parametrize("size", [(300, 300), (640, 480)])
def test_noise_stays_within_the_byte_budget(size: tuple[int, int]) -> None:
    """Noise is JPEG's worst case: a lower quality, then half the size, keep it in the budget."""
    small = thumbnail(_encoded(Image.effect_noise(size, 200).convert("RGB"), "PNG"))
    assert len(small.jpeg) <= MAX_THUMBNAIL_BYTES


def test_a_big_jpeg_decodes_in_draft_mode_at_a_fraction_of_its_pixels() -> None:
    big = _encoded(
        Image.new("RGB", (8000, 6000), (90, 120, 60)), "JPEG", quality=50
    )  # 48 MP: over MAX_DECODED_PIXELS whole
    assert MAX_DECODED_PIXELS < 8000 * 6000
    started = time.perf_counter()
    small = thumbnail(big)
    assert (small.width, small.height) == (8000, 6000)
    assert time.perf_counter() - started < 2.0


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


HOSTILE = {
    "a PNG claiming 100000 x 100000 pixels": (claimed_png(100_000, 100_000), "decompression bomb"),
    "a PNG claiming 8000 x 6000 pixels (Pillow would open it; over the pixels decoded)": (
        claimed_png(8000, 6000),
        "decoded at most",
    ),
    "a PNG header with a zero width": (claimed_png(0, 10), "not an image"),
    "a JPEG header claiming 60000 x 60000 pixels": (
        _with_jpeg_size(_encoded(PHOTO, "JPEG"), 60_000, 60_000),
        "",
    ),
    "a JPEG cut in half": (_encoded(PHOTO, "JPEG")[:4000], "cannot be decoded"),
    "a JPEG with its scan overwritten": (
        (lambda b: b[:700] + bytes(range(256)) * 8 + b[2748:])(_encoded(PHOTO, "JPEG")),
        "",
    ),
    "an EPS file (Pillow would run Ghostscript)": (
        b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n",
        "not an image",
    ),
    "an SVG file": (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', "not an image"),
    "text": (b"this is not a picture\n" * 10, "not an image"),
    "nothing": (b"", "not an image"),
    "noise": (bytes((n * 7919) % 251 for n in range(50_000)), "not an image"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_file_is_a_reason_never_an_error_nor_its_claimed_pixels(name: str) -> None:
    content, reason = HOSTILE[name]
    before, started = _peak_mb(), time.perf_counter()
    try:
        small = thumbnail(content)
    except Unreadable as why:
        assert reason in str(why) and "\n" not in str(why) and len(str(why)) < 160
    else:  # a corrupted scan may still decode to something: then it is a small JPEG, like any other
        assert reason == "" and Image.open(io.BytesIO(small.jpeg)).format == "JPEG"
    assert time.perf_counter() - started < 2.0
    assert _peak_mb() - before < 200, "the claimed pixels were allocated"


def test_the_caps_refuse_before_decoding() -> None:
    with pytest.raises(Unreadable, match="more than the"):
        thumbnail(b"\xff\xd8" + b"\0" * MAX_IMAGE_BYTES)
    with pytest.raises(Unreadable, match="opened at most"):
        thumbnail(claimed_png(20_000, 10_000))  # 200 MP: over Pillow's own limit, refused as it opens
    with pytest.raises(Unreadable, match="decoded at most"):
        thumbnail(claimed_png(10_000, 5_000))  # 50 MP: Pillow would decode it; the cap does not
