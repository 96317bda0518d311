"""Image uploads the service accepts: content type -> the leading magic bytes a file of
that type starts with (PNG, JPEG, TIFF little- and big-endian, BMP, WebP's RIFF). One
table for the HTTP API's check and the client's guess."""

from __future__ import annotations

__all__ = ["IMAGE_TYPES"]

IMAGE_TYPES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/tiff": (b"II*\x00", b"MM\x00*"),
    "image/bmp": (b"BM",),
    "image/webp": (b"RIFF",),
}
