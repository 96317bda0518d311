"""Input checks shared by the families: text lists, titles, and image bytes.

Every check raises :class:`models.errors.ModelInputError` with the position of the bad item.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from PIL import Image

from models.errors import ModelInputError

__all__ = [
    "decode_images",
    "join_title",
    "text_batch",
    "text_list",
    "title_list",
    "truncate_characters",
]


def text_list(texts: Sequence[str], name: str = "texts") -> list[str]:
    """``texts`` as a list of str.

    Raises:
        ModelInputError: ``texts`` is a single str (a common slip that would encode each
            character), or an item is not a str.
    """
    if isinstance(texts, str | bytes):
        raise ModelInputError(f"{name} must be a sequence of strings, not a single string")
    items = list(texts)
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise ModelInputError(f"{name}[{position}] is {type(item).__name__}, expected str")
    return items


def title_list(titles: Sequence[str | None] | None, count: int) -> list[str] | None:
    """Titles lined up with ``count`` texts (None items become ""), or None.

    Raises:
        ModelInputError: not one title per text, or a title that is not a str.
    """
    if titles is None:
        return None
    if isinstance(titles, str | bytes):
        raise ModelInputError("titles must be a sequence of strings, not a single string")
    items = ["" if title is None else title for title in titles]
    if len(items) != count:
        raise ModelInputError(f"got {len(items)} titles for {count} texts; give one per text")
    return text_list(items, "titles")


def text_batch(
    texts: Sequence[str], titles: Sequence[str | None] | None = None
) -> tuple[list[str], list[str] | None]:
    """``texts`` and ``titles`` as lists, checked at a model port before they cross a
    thread or a process (where a bare string would become a list of characters).

    Raises:
        ModelInputError: as :func:`text_list` and :func:`title_list`.
    """
    items = text_list(texts)
    return items, title_list(titles, len(items))


def join_title(title: str, text: str) -> str:
    """``"title. text"`` (the title's own trailing full stops dropped); the text alone when
    the title is blank."""
    heading = title.strip().rstrip(".")
    return f"{heading}. {text}" if heading else text


def truncate_characters(texts: Sequence[str], max_chars: int | None) -> list[str]:
    """Texts cut to their first ``max_chars`` characters (unchanged when None)."""
    if max_chars is None:
        return list(texts)
    return [text[:max_chars] for text in texts]


# formats whose header gives the size Pillow decodes to (the bomb check at open is final)
_SIZE_IN_HEADER = frozenset({"PNG", "JPEG", "WEBP", "BMP", "GIF"})
_DECODE_ERRORS = (
    OSError,
    ValueError,
    SyntaxError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
)


def decode_images(images: Sequence[bytes], workers: int = 1) -> list[Image.Image]:
    """Decode encoded image bytes (PNG, JPEG, TIFF, ...) into RGB PIL images, in order.

    Headers are read one by one (cheap; the decompression-bomb check turns Pillow's
    warning into an error, which ``warnings.catch_warnings`` cannot do safely across
    threads). The pixels of PNG, JPEG, WebP, BMP and GIF images, whose headers give their
    size, are decoded on ``workers`` threads (Pillow's decoders release the GIL); other
    formats, whose size Pillow may only find while loading them, here, under the same
    check. A model replica passes its threads: decoding is most of an image call's CPU
    time (``bench/README.md``, "On a lent H200").

    Raises:
        ModelInputError: an item is not bytes, or cannot be decoded as an image (truncated,
            corrupt, unknown format, or a decompression bomb); the message names its index.
    """
    if isinstance(images, bytes | bytearray | memoryview):
        raise ModelInputError("images must be a sequence of encoded images, not one bytes object")
    opened: list[tuple[Image.Image, int]] = []
    try:
        for position, data in enumerate(images):
            opened.append(_open_image(position, data))
        # a format whose header gives the final size decodes on the pool; another (ICO,
        # ICNS, TIFF: Pillow finds the size while loading) here, under the bomb check
        pooled = [i for i, (image, _) in enumerate(opened) if image.format in _SIZE_IN_HEADER]
        done: dict[int, Image.Image] = {}
        if workers > 1 and len(pooled) > 1:
            with ThreadPoolExecutor(max_workers=min(workers, len(pooled))) as pool:
                results = pool.map(_to_rgb, pooled, [opened[i] for i in pooled])
                done = dict(zip(pooled, results, strict=True))
        return [
            done[position] if position in done else _to_rgb_checked(position, item)
            for position, item in enumerate(opened)
        ]
    finally:
        for image, _ in opened:
            image.close()


def _open_image(position: int, data: object) -> tuple[Image.Image, int]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ModelInputError(f"images[{position}] is {type(data).__name__}, expected bytes")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(bytes(data))), len(data)
    except _DECODE_ERRORS as error:
        raise _not_decodable(position, len(data), error) from None


def _to_rgb(position: int, opened: tuple[Image.Image, int]) -> Image.Image:
    image, size = opened
    try:
        return image.convert("RGB")
    except _DECODE_ERRORS as error:
        raise _not_decodable(position, size, error) from None


def _to_rgb_checked(position: int, opened: tuple[Image.Image, int]) -> Image.Image:
    # the bomb check while loading; the pool has finished, so no thread of this call
    # changes the warnings filters meanwhile
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        return _to_rgb(position, opened)


def _not_decodable(position: int, size: int, error: BaseException) -> ModelInputError:
    return ModelInputError(f"images[{position}] ({size} bytes) is not a decodable image: {error}")
