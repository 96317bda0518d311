"""Image encoders: a tiny open_clip model in BiomedCLIP's layout (R-XM-1) and a tiny timm
ViT in UNI2's (R-XM-2), loaded through the same loaders as the real ones."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from models.errors import ModelInputError, ModelNotAvailableError
from models.inputs import decode_images
from models.loader import load_encoder
from models.open_clip_encoder import OpenClipEncoder
from models.specs import EncoderSpec
from models.timm_encoder import TimmImageEncoder, resolve_layer_references
from tests.models.helpers import ProfileFactory
from tests.models.tiny_models import CLIP_DIMENSION, TIMM_DIMENSION

pytestmark = pytest.mark.unit


def image_bytes(color: tuple[int, int, int], size: tuple[int, int], kind: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image = Image.new("RGB", size, color)
    for x in range(0, size[0], 3):
        image.putpixel((x, x % size[1]), (255 - color[0], 30, 200))
    image.save(buffer, format=kind)
    return buffer.getvalue()


IMAGES = [
    image_bytes((200, 10, 10), (40, 30)),
    image_bytes((10, 200, 10), (64, 64), "JPEG"),
    image_bytes((10, 10, 200), (17, 90)),
]
BAD_IMAGES = [b"", b"not an image at all", IMAGES[0][:40]]


@pytest.fixture(scope="module")
def clip_encoder(tiny_clip_folder: Path, make_profile: ProfileFactory) -> OpenClipEncoder:
    spec = EncoderSpec(
        role="biomedclip",
        family="open-clip",
        source=str(tiny_clip_folder),
        dimension=CLIP_DIMENSION,
        modality="image",
    )
    loaded = load_encoder(spec, make_profile(max_batch_size=2))
    assert isinstance(loaded, OpenClipEncoder)
    return loaded


@pytest.fixture(scope="module")
def vit_encoder(tiny_vit_folder: Path, make_profile: ProfileFactory) -> TimmImageEncoder:
    spec = EncoderSpec(
        role="uni2",
        family="timm",
        source=str(tiny_vit_folder),
        dimension=TIMM_DIMENSION,
        modality="image",
    )
    loaded = load_encoder(spec, make_profile(max_batch_size=2))
    assert isinstance(loaded, TimmImageEncoder)
    return loaded


def assert_unit_rows(vectors: np.ndarray, count: int, dimension: int) -> None:
    assert vectors.shape == (count, dimension)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


class TestOpenClipEncoder:
    def test_r_xm_1_image_and_text_towers_share_one_space(
        self, clip_encoder: OpenClipEncoder
    ) -> None:
        images = clip_encoder.encode_images(IMAGES)
        texts = clip_encoder.encode_texts(["chest x-ray", "egfr " * 500])
        assert_unit_rows(images, len(IMAGES), CLIP_DIMENSION)
        assert_unit_rows(texts, 2, CLIP_DIMENSION)
        assert (texts @ images.T).shape == (2, len(IMAGES))
        np.testing.assert_allclose(clip_encoder.encode(["chest x-ray"]), texts[:1], atol=1e-6)

    def test_batched_equals_one_by_one(self, clip_encoder: OpenClipEncoder) -> None:
        single = np.stack([clip_encoder.encode_images([image])[0] for image in IMAGES])
        np.testing.assert_allclose(clip_encoder.encode_images(IMAGES), single, atol=1e-5)
        texts = ["lung", "insulin glucose", "egfr kinase inhibitor"]
        single_texts = np.stack([clip_encoder.encode_texts([text])[0] for text in texts])
        np.testing.assert_allclose(clip_encoder.encode_texts(texts), single_texts, atol=1e-5)

    @pytest.mark.parametrize("bad", BAD_IMAGES)
    def test_bad_image_bytes_raise_model_input_error(
        self, clip_encoder: OpenClipEncoder, bad: bytes
    ) -> None:
        with pytest.raises(ModelInputError, match=r"images\[1\]"):
            clip_encoder.encode_images([IMAGES[0], bad])

    def test_empty_inputs(self, clip_encoder: OpenClipEncoder) -> None:
        assert clip_encoder.encode_images([]).shape == (0, CLIP_DIMENSION)
        assert clip_encoder.encode_texts([]).shape == (0, CLIP_DIMENSION)

    def test_uncached_text_tower_is_named(
        self, tiny_clip_folder: Path, make_profile: ProfileFactory, tmp_path: Path
    ) -> None:
        spec = EncoderSpec(
            role="biomedclip",
            family="open-clip",
            source=str(tiny_clip_folder),
            dimension=CLIP_DIMENSION,
            modality="image",
        )
        with pytest.raises(ModelNotAvailableError, match="text tower 'tiny-org/tiny-bert'"):
            load_encoder(spec, make_profile(hf_cache_dir=tmp_path))


class TestTimmImageEncoder:
    def test_shape_dtype_norm(self, vit_encoder: TimmImageEncoder) -> None:
        assert_unit_rows(vit_encoder.encode_images(IMAGES), len(IMAGES), TIMM_DIMENSION)

    def test_batched_equals_one_by_one(self, vit_encoder: TimmImageEncoder) -> None:
        single = np.stack([vit_encoder.encode_images([image])[0] for image in IMAGES])
        np.testing.assert_allclose(vit_encoder.encode_images(IMAGES), single, atol=1e-5)

    def test_r_xm_2_has_no_text_tower(self, vit_encoder: TimmImageEncoder) -> None:
        with pytest.raises(ModelInputError, match="images only"):
            vit_encoder.encode_texts(["pathology slide"])
        with pytest.raises(ModelInputError, match="images only"):
            vit_encoder.encode(["pathology slide"])

    @pytest.mark.parametrize("bad", [*BAD_IMAGES, "a string"])
    def test_bad_image_bytes_raise_model_input_error(
        self, vit_encoder: TimmImageEncoder, bad: bytes
    ) -> None:
        with pytest.raises(ModelInputError):
            vit_encoder.encode_images([bad])

    def test_layer_references_resolve_to_classes(self) -> None:
        import timm.layers
        import torch

        spec = EncoderSpec(role="uni2", family="timm", source="/m", dimension=4, modality="image")
        resolved = resolve_layer_references(
            {"mlp_layer": "timm.layers.SwiGLUPacked", "act_layer": "torch.nn.SiLU", "depth": 2},
            spec,
        )
        assert resolved == {
            "mlp_layer": timm.layers.SwiGLUPacked,
            "act_layer": torch.nn.SiLU,
            "depth": 2,
        }
        with pytest.raises(ModelNotAvailableError):
            resolve_layer_references({"act_layer": "os.system"}, spec)


class CountingCalls:
    """The real encoder, counting its model calls (the batch must make one per group)."""

    def __init__(self, model: OpenClipEncoder) -> None:
        self.model, self.calls = model, 0

    def encode_images(self, images: list[bytes]) -> np.ndarray:
        self.calls += 1
        return self.model.encode_images(images)

    def encode_texts(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return self.model.encode_texts(texts)


def test_a_replica_batch_makes_one_call_per_role_and_kind(clip_encoder: OpenClipEncoder) -> None:
    from deployments.batching import ImageRequest
    from deployments.image_encoder import encode_image_batch

    model = CountingCalls(clip_encoder)
    requests = [
        ImageRequest("biomedclip", images=tuple(IMAGES[:2])),
        ImageRequest("biomedclip", texts=("chest x-ray",)),
        ImageRequest("biomedclip", images=(IMAGES[2],)),
        ImageRequest("biomedclip", texts=("lung", "egfr kinase inhibitor")),
    ]
    vectors = encode_image_batch({"biomedclip": model}, requests)
    assert model.calls == 2
    assert [v.shape for v in vectors] == [
        (2, CLIP_DIMENSION),
        (1, CLIP_DIMENSION),
        (1, CLIP_DIMENSION),
        (2, CLIP_DIMENSION),
    ]
    for request, got in zip(requests, vectors, strict=True):
        alone = (
            clip_encoder.encode_images(list(request.images))
            if request.images
            else clip_encoder.encode_texts(list(request.texts))
        )
        np.testing.assert_allclose(got, alone, atol=1e-5)


class TestDecodeImages:
    """``models.inputs.decode_images``: headers one by one, pixels on worker threads."""

    @pytest.mark.parametrize("workers", [1, 4])
    def test_in_order_and_the_same_on_threads(self, workers: int) -> None:
        decoded = decode_images(IMAGES, workers=workers)
        assert [image.size for image in decoded] == [Image.open(io.BytesIO(b)).size for b in IMAGES]
        assert all(image.mode == "RGB" for image in decoded)
        one_by_one = decode_images(IMAGES)
        assert all(
            np.array_equal(np.asarray(a), np.asarray(b))
            for a, b in zip(decoded, one_by_one, strict=True)
        )

    @pytest.mark.parametrize("workers", [1, 4])
    def test_a_truncated_image_is_named_by_its_index(self, workers: int) -> None:
        truncated = image_bytes((10, 20, 30), (64, 64))[:60]
        with pytest.raises(ModelInputError, match=r"images\[2\]"):
            decode_images([*IMAGES[:2], truncated, IMAGES[0]], workers=workers)
        with pytest.raises(ModelInputError, match=r"images\[1\] is str"):
            decode_images([IMAGES[0], "not bytes"], workers=workers)  # type: ignore[list-item]

    @pytest.mark.parametrize("workers", [1, 4])
    def test_a_decompression_bomb_is_refused(
        self, workers: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # over MAX_IMAGE_PIXELS Pillow only warns (it refuses at twice that): refused here
        monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
        bomb = image_bytes((1, 2, 3), (40, 40))  # 1,600 pixels
        with pytest.raises(ModelInputError, match=r"images\[1\].*not a decodable image"):
            decode_images([image_bytes((1, 2, 3), (8, 8)), bomb], workers=workers)

    def test_a_format_sized_while_loading_decodes_beside_pooled_ones(self) -> None:
        # ICO: Pillow learns the embedded image's size while loading it, so it is decoded
        # outside the pool, under the bomb check; the order stays the callers'
        ico = image_bytes((5, 6, 7), (32, 32), "ICO")
        decoded = decode_images([IMAGES[0], ico, IMAGES[1]], workers=4)
        assert [image.size for image in decoded] == [(40, 30), (32, 32), (64, 64)]
        assert decoded[1].getpixel((1, 1)) == (5, 6, 7)
