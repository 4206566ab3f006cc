"""One picture's bytes → a small JPEG of it, or why not: the only place an image is decoded.

Pillow decodes and scales (it reads every common format, decodes a JPEG at 1/2 to 1/8 of its
size in "draft" mode, and is the one widely installed choice; it is the `images` extra). The
bytes may be anything a folder holds, so the header's size is checked before any pixel is
decoded, only a few plain raster formats are opened (no EPS, which would run Ghostscript),
and whatever a decoder raises on hostile bytes becomes a one-line reason, never an error.
"""

from __future__ import annotations

import io
import warnings
from typing import TYPE_CHECKING, Final

import msgspec

if TYPE_CHECKING:
    from PIL.Image import Image

# The formats opened: those of IMAGE_EXTENSIONS (a phone's multi-picture JPEG opens as JPEG).
FORMATS: Final = ("JPEG", "PNG", "WEBP", "BMP", "GIF", "TIFF")
# An image file larger than this is not read (a photo is a few MB; a 100 MP PNG ~ 60 MB).
MAX_IMAGE_BYTES: Final = 64 << 20
# A header claiming more pixels than Pillow's decompression-bomb limit (2 x MAX_IMAGE_PIXELS,
# 179 MP) is refused as it is opened. Of the rest, a JPEG decodes at 1/2 to 1/8 in draft mode,
# so it is the size to be decoded that is capped; other formats decode whole.
MAX_DECODED_PIXELS: Final = 40_000_000  # 120 MB of RGB
# The long side of a thumbnail, in pixels: twice the sketch's 150 CSS px, sharp on a HiDPI screen.
LONG_SIDE: Final = 300
# JPEG quality, then the lower ones tried while the thumbnail is over its byte budget, and last
# half the size: the budget keeps the page's 40 sketches small (measured in docs/images.md).
QUALITIES: Final = (60, 45, 30)
MAX_THUMBNAIL_BYTES: Final = 20_000


class Thumbnail(msgspec.Struct, frozen=True):
    """The JPEG bytes of a picture scaled to fit LONG_SIDE, and the picture's own size."""

    jpeg: bytes
    width: int  # of the picture, in its pixels, upright
    height: int


class Unreadable(Exception):
    """Why a picture is not drawn, in a few words for the page (`not an image`)."""


def pillow_missing() -> str | None:
    """Why no picture can be decoded here (Pillow is not installed), None when it can."""
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return "Pillow is not installed (pip install 'evaluate-prelabeling-efficiency[images]')"
    return None


def _fit(width: int, height: int) -> tuple[int, int]:
    """The thumbnail's size: the long side LONG_SIDE at most, never enlarged, at least 1 x 1."""
    scale = min(1.0, LONG_SIDE / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _pixels(width: int, height: int) -> str:
    return f"{width}x{height} pixels"


def _opened(content: bytes) -> Image:
    from PIL import Image, UnidentifiedImageError

    try:
        picture = Image.open(io.BytesIO(content), formats=FORMATS)
    except UnidentifiedImageError:
        raise Unreadable("not an image (JPEG, PNG, WebP, BMP, GIF or TIFF)") from None
    except Image.DecompressionBombError:
        limit = 2 * (Image.MAX_IMAGE_PIXELS or 0)
        raise Unreadable(f"more pixels than the {limit:,} opened at most (a decompression bomb?)") from None
    return picture


def _decoded(content: bytes) -> tuple[Image, tuple[int, int]]:
    """The picture upright in RGB, decoded no larger than needed, and its full upright size."""
    from PIL import ImageOps

    picture = _opened(content)
    width, height = picture.size
    picture.draft("RGB", _fit(width, height))  # JPEG: decode at 1/2..1/8 of the size; others: no-op
    if picture.size[0] * picture.size[1] > MAX_DECODED_PIXELS:
        raise Unreadable(f"{_pixels(width, height)}, more than the {MAX_DECODED_PIXELS:,} decoded at most")
    # Only now: a PNG decodes itself whole to look for EXIF after its pixels.
    orientation = picture.getexif().get(0x0112, 1)  # EXIF Orientation: 5-8 turn it a quarter
    upright = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
    upright_picture = ImageOps.exif_transpose(picture)  # decodes (now at the draft's size)
    return upright_picture.convert("RGB"), upright


def _encoded(picture: Image, quality: int) -> bytes:
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=quality, optimize=True)
    return out.getvalue()


def _jpeg(picture: Image) -> bytes:
    """The first of the QUALITIES' encodings within MAX_THUMBNAIL_BYTES, else the picture at half
    its size and the lowest quality (a few kB whatever it shows)."""
    for quality in QUALITIES:
        encoded = _encoded(picture, quality)
        if len(encoded) <= MAX_THUMBNAIL_BYTES:
            return encoded
    half = ((picture.width + 1) // 2, (picture.height + 1) // 2)
    return _encoded(picture.resize(half, reducing_gap=2.0), QUALITIES[-1])


def thumbnail(content: bytes) -> Thumbnail:
    """`content` as a small JPEG; `Unreadable` says why it cannot be one."""
    from PIL import Image

    if len(content) > MAX_IMAGE_BYTES:
        raise Unreadable(f"{len(content):,} bytes, more than the {MAX_IMAGE_BYTES:,} read at most")
    with warnings.catch_warnings():
        # Pillow warns of a decompression bomb below its own limit, and of odd EXIF/metadata:
        # the size is capped above; a warning is no reason to fail, nor to print on stderr.
        warnings.simplefilter("ignore")
        try:
            picture, (width, height) = _decoded(content)
            small = picture.resize(_fit(*picture.size), Image.Resampling.BILINEAR, reducing_gap=2.0)
            return Thumbnail(_jpeg(small), width, height)
        except Unreadable:
            raise
        except Exception as error:  # hostile bytes: each decoder raises its own kinds (OSError,
            # ValueError, SyntaxError, struct.error, EOFError, IndexError...); none may end the run
            raise Unreadable(f"cannot be decoded ({_reason(error)})") from None


def _reason(error: Exception) -> str:
    text = str(error).splitlines()[0][:80] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
