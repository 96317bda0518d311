"""One clear model error per family: a broken tiny model folder (a config naming a wrong
width, a missing weights file, remote code that does not import) or a warm-up forward pass
that raises gives :class:`ModelNotAvailableError` naming the role, the source and how to
provide it, the original exception kept as ``__cause__``; and the CLI prints that message
alone (no traceback) with exit status 3."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from models.errors import ModelNotAvailableError, find_model_error
from models.loader import load_cross_encoder, load_encoder
from models.specs import EncoderSpec
from tests.models import tiny_models
from tests.models.helpers import DEFAULT_PROFILE, PRODUCTION_PROFILE, ProfileFactory
from tests.models.tiny_models import CLIP_DIMENSION, HIDDEN

pytestmark = pytest.mark.unit


def copy_folder(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def remove_weights(folder: Path) -> None:
    for pattern in ("*.safetensors", "*.bin", "*.pth"):
        for path in folder.glob(pattern):
            path.unlink()


def load(spec: EncoderSpec, profile: Any) -> Any:
    return load_cross_encoder(spec, profile) if spec.is_scorer else load_encoder(spec, profile)


def assert_clear(error: ModelNotAvailableError, spec: EncoderSpec, *parts: str) -> None:
    message = str(error)
    assert f"role {spec.role!r}" in message
    assert f"source {spec.source!r}" in message
    assert "To provide it:" in message
    assert "\n" not in message and "Traceback" not in message
    for part in parts:
        assert part in message, message


def uni2_kwargs(**changes: Any) -> dict[str, Any]:
    document = yaml.safe_load(PRODUCTION_PROFILE.read_text(encoding="utf-8"))
    production = document["models"]["roles"]["uni2"]["model_kwargs"]
    return {**tiny_models.tiny_uni2_kwargs(production), **changes}


@pytest.fixture(scope="module")
def laion_folder(tiny_root: Path) -> Path:
    return tiny_models.build_tiny_laion_clip(tiny_root / "errors-laion")


@pytest.fixture(scope="module")
def biomedclip_folder(tiny_root: Path, tiny_bert_folder: Path) -> Path:
    return tiny_models.build_tiny_biomedclip(tiny_root / "errors-biomedclip", tiny_bert_folder)


@pytest.fixture(scope="module")
def uni2_folder(tiny_root: Path) -> Path:
    return tiny_models.build_tiny_uni2_vit(tiny_root / "errors-uni2", uni2_kwargs())


def text_spec(folder: Path, **fields: Any) -> EncoderSpec:
    base = {"role": "medcpt-query", "family": "hf-text", "dimension": HIDDEN, "pooling": "cls"}
    return EncoderSpec(source=str(folder), **{**base, **fields})


def cross_spec(folder: Path) -> EncoderSpec:
    return EncoderSpec(role="medcpt-rerank", family="cross-encoder", source=str(folder))


def clip_spec(folder: Path, role: str = "general-vl") -> EncoderSpec:
    return EncoderSpec(
        role=role,
        family="open-clip",
        source=str(folder),
        dimension=CLIP_DIMENSION,
        modality="image",
    )


def uni2_spec(folder: Path, **changes: Any) -> EncoderSpec:
    return EncoderSpec(
        role="uni2",
        family="timm",
        source=str(folder),
        dimension=32,
        modality="image",
        model_kwargs=uni2_kwargs(**changes),
    )


class TestBrokenFolders:
    def test_hf_text_config_with_wrong_width(
        self, tiny_bert_folder: Path, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        folder = copy_folder(tiny_bert_folder, tmp_path / "bert")
        edit_json(folder / "config.json", lambda c: c.update(hidden_size=64, intermediate_size=128))
        spec = text_spec(folder)
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec)

    def test_hf_text_missing_weights(
        self, tiny_bert_folder: Path, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        folder = copy_folder(tiny_bert_folder, tmp_path / "bert")
        remove_weights(folder)
        spec = text_spec(folder)
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "loading failed")
        assert caught.value.__cause__ is not None

    def test_remote_code_that_does_not_import(
        self, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        folder = tmp_path / "remote"
        folder.mkdir()
        config = {
            "model_type": "tiny-remote",
            "architectures": ["TinyRemoteModel"],
            "auto_map": {
                "AutoConfig": "configuration_tiny_remote.TinyRemoteConfig",
                "AutoModel": "modeling_tiny_remote.TinyRemoteModel",
            },
        }
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        code = (
            "import biomed_search_no_such_package\n"
            "from transformers import PretrainedConfig\n\n\n"
            "class TinyRemoteConfig(PretrainedConfig):\n"
            "    model_type = 'tiny-remote'\n"
        )
        (folder / "configuration_tiny_remote.py").write_text(code, encoding="utf-8")
        (folder / "modeling_tiny_remote.py").write_text(code, encoding="utf-8")
        spec = text_spec(folder, trust_remote_code=True)
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "loading failed", "ImportError", "not installed")
        assert isinstance(caught.value.__cause__, ImportError)

    def test_cross_encoder_missing_weights(
        self, tiny_cross_encoder_folder: Path, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        folder = copy_folder(tiny_cross_encoder_folder, tmp_path / "cross")
        remove_weights(folder)
        spec = cross_spec(folder)
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "loading failed")

    def test_open_clip_config_with_wrong_width(
        self, laion_folder: Path, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        folder = copy_folder(laion_folder, tmp_path / "laion")
        edit_json(
            folder / "open_clip_config.json",
            lambda c: c["model_cfg"]["vision_cfg"].update(width=64),
        )
        spec = clip_spec(folder)
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "loading failed")
        assert caught.value.__cause__ is not None

    @pytest.mark.parametrize("layout", ["laion", "biomedclip"])
    def test_open_clip_missing_weights(
        self,
        layout: str,
        laion_folder: Path,
        biomedclip_folder: Path,
        tmp_path: Path,
        make_profile: ProfileFactory,
    ) -> None:
        source = laion_folder if layout == "laion" else biomedclip_folder
        folder = copy_folder(source, tmp_path / layout)
        remove_weights(folder)
        spec = clip_spec(folder, role="general-vl" if layout == "laion" else "biomedclip")
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "no weights file")

    def test_timm_kwargs_with_wrong_width(
        self, uni2_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = uni2_spec(uni2_folder, embed_dim=64)
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "loading failed")

    def test_timm_missing_weights(
        self, uni2_folder: Path, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        folder = copy_folder(uni2_folder, tmp_path / "uni2")
        remove_weights(folder)
        spec = uni2_spec(folder)
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "loading failed")
        assert caught.value.__cause__ is not None


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("boom: expected scalar type Float but found Half")


class TestWarmUpFailures:
    """The first forward pass of each family raising (a dtype clash, a kernel missing on
    this device) names the warm-up stage and keeps the original."""

    def _check(self, spec: EncoderSpec, make_profile: ProfileFactory) -> None:
        with pytest.raises(ModelNotAvailableError) as caught:
            load(spec, make_profile())
        assert_clear(caught.value, spec, "warm-up failed", "RuntimeError: boom")
        assert isinstance(caught.value.__cause__, RuntimeError)

    def test_hf_text(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory, monkeypatch: Any
    ) -> None:
        monkeypatch.setattr("models.text.PooledTextModule.forward", _boom)
        self._check(text_spec(tiny_bert_folder), make_profile)

    def test_cross_encoder(
        self, tiny_cross_encoder_folder: Path, make_profile: ProfileFactory, monkeypatch: Any
    ) -> None:
        monkeypatch.setattr("models.cross_encoder.LogitModule.forward", _boom)
        self._check(cross_spec(tiny_cross_encoder_folder), make_profile)

    def test_open_clip_native(
        self, laion_folder: Path, make_profile: ProfileFactory, monkeypatch: Any
    ) -> None:
        monkeypatch.setattr("open_clip.model.CLIP.encode_image", _boom)
        self._check(clip_spec(laion_folder), make_profile)

    def test_open_clip_timm_tower(
        self, biomedclip_folder: Path, make_profile: ProfileFactory, monkeypatch: Any
    ) -> None:
        monkeypatch.setattr("open_clip.model.CustomTextCLIP.encode_text", _boom)
        self._check(clip_spec(biomedclip_folder, role="biomedclip"), make_profile)

    def test_timm(self, uni2_folder: Path, make_profile: ProfileFactory, monkeypatch: Any) -> None:
        monkeypatch.setattr("timm.models.vision_transformer.VisionTransformer.forward", _boom)
        self._check(uni2_spec(uni2_folder), make_profile)


class TestFindModelError:
    def test_direct_and_chained(self) -> None:
        error = ModelNotAvailableError("model for role 'x' is not available")
        assert find_model_error(error) is error
        try:
            try:
                raise error
            except ModelNotAvailableError as inner:
                raise ValueError("wrapped") from inner
        except ValueError as outer:
            assert find_model_error(outer) is error
        assert find_model_error(RuntimeError("something else")) is None

    def test_from_a_ray_serve_deploy_failure_text(self) -> None:
        message = "model for role 'uni2' (timm, source 'x') is not available: y. To provide it: z."
        text = (
            "Deploying application biomed-search failed: The deployment failed to start 3 "
            'times in a row.\nTraceback (most recent call last):\n  File "replica.py", '
            f"line 1, in __init__\nmodels.errors.ModelNotAvailableError: {message}"
        )
        found = find_model_error(RuntimeError(text))
        assert isinstance(found, ModelNotAvailableError)
        assert str(found) == message


class TestCommandLine:
    def broken_config(self, tmp_path: Path, broken: Path) -> Path:
        """Default profile, every text role pointing at ``broken``, external (unreachable)
        stores so that nothing is started before the models load."""
        document = yaml.safe_load(DEFAULT_PROFILE.read_text(encoding="utf-8"))
        roles = {
            name: {"source": str(broken)}
            for name, entry in document["models"]["roles"].items()
            if entry.get("family") in {"hf-text", "bi-encoder-scorer", "cross-encoder"}
        }
        config = {
            "models": {"roles": roles},
            "stores": {
                "milvus_uri": "http://127.0.0.1:9",
                "postgres_dsn": "postgresql://nobody@127.0.0.1:9/none",
            },
        }
        path = tmp_path / "broken.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path

    def test_eval_prints_the_model_error_alone_and_exits_3(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        from biomed_search import cli

        broken = tmp_path / "no-such-model"
        queries = tmp_path / "queries.jsonl"
        queries.write_text(json.dumps({"query": "gefitinib dose"}) + "\n", encoding="utf-8")
        code = cli.main(
            [
                "eval",
                "--dataset",
                "jsonl",
                "--queries",
                str(queries),
                "--kb",
                "test",
                "--limit",
                "1",
                "--config",
                str(self.broken_config(tmp_path, broken)),
                "--data-dir",
                str(tmp_path / "data"),
                "--out",
                str(tmp_path / "out"),
            ]
        )
        captured = capsys.readouterr()
        assert code == cli.EXIT_MODEL_NOT_AVAILABLE == 3
        output = captured.out + captured.err
        assert "Traceback" not in output
        last = captured.err.strip().splitlines()[-1]
        assert last.startswith("model for role ") and str(broken) in last
        assert "To provide it:" in last

    def test_serve_replica_failure_prints_the_model_error_alone(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
    ) -> None:
        """A Ray Serve replica that could not load its model: Serve raises a RuntimeError
        holding the replica's traceback; the CLI prints the model error alone."""
        from biomed_search import cli
        from deployments import serve_cli
        from deployments.stores import StoreEndpoints

        message = (
            "model for role 'uni2' (timm, source 'hf-hub:MahmoodLab/UNI2-h') is not "
            "available: hub id 'MahmoodLab/UNI2-h' is not in the local Hugging Face cache. "
            "To provide it: download it."
        )

        class Servers:
            def __init__(self, config: Any) -> None:
                pass

            def start(self) -> StoreEndpoints:
                return StoreEndpoints(milvus_uri="http://127.0.0.1:9", postgres_dsn="x")

            def stop(self) -> None:
                pass

        def failed_deploy(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError(
                "Deploying application biomed-search failed: The deployment failed to "
                "start 3 times in a row.\nTraceback (most recent call last):\n"
                '  File "deployments/image_encoder.py", line 47, in __init__\n'
                f"models.errors.ModelNotAvailableError: {message}"
            )

        monkeypatch.setattr(serve_cli, "EmbeddedServers", Servers)
        monkeypatch.setattr(serve_cli, "start_ray_serve", failed_deploy)
        monkeypatch.setattr(serve_cli, "_stop_ray", lambda: None)
        code = cli.main(["serve", "--no-demo", "--data-dir", str(tmp_path / "data")])
        captured = capsys.readouterr()
        assert code == 3
        assert "Traceback" not in captured.out + captured.err
        assert captured.err.strip().splitlines()[-1] == message
