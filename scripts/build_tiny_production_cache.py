"""Build a Hugging Face hub cache of tiny random-weight copies of the production models.

Why: ``configs/profiles/production.yaml`` names real hub ids (PubMedBERT, MedCPT, MPNet,
MoLFormer, BiomedCLIP, UNI2-h, the laion CLIP, the MedCPT cross-encoder) that resolve from
the local cache only, and their weights (GBs, one of them gated) are not on a test
machine. This script writes, under each of those ids, a tiny random model with that
role's real architecture and file layout (``models--org--name/snapshots/<commit>/`` +
``refs/main``, as ``hf download`` leaves them), so the production profile starts through
its real loaders in seconds. The builders are the test suite's
(``tests/models/tiny_models.py``); this is a development tool, not part of the product.

It also writes ``production-tiny.yaml``, an overlay for ``--config``. The overlay changes
no model's identity: family, pooling, metric, normalisation and source ids stay as the
profile has them. It sets

- ``models.hf_cache_dir`` to the cache built here (``HF_HOME=<out>`` finds it too);
- each role's ``dimension`` to the tiny width (32 for text, SMILES and UNI2, 16 for the
  CLIP models; the real ones are 768 / 512 / 1536), and UNI2's size ``model_kwargs``
  (its timm kwargs build the model, so they must match the tiny weights);
- with ``image_collections`` (default): the radiology, pathology and visual collections
  enabled, so every image role is deployed (the profile leaves them off until their
  weights are cached, which they now are);
- with ``cpu`` (default): the Serve model deployments placed on CPU shares only
  (``num_gpus: 0``, ``num_cpus: 0.2``); the profile's GPU shares would never be placed
  on a machine without a GPU, and its CPU shares do not fit 2 cores.

Usage, from the repository root (``tests`` is not an installed package, so run it as a
module): ``python -m scripts.build_tiny_production_cache OUT [--no-image-collections]
[--gpu]``, then ``biomed-search serve --profile production --config
OUT/production-tiny.yaml`` (or drop ``hf_cache_dir`` from it and set ``HF_HOME=OUT``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.models import tiny_models  # a dev tool: run from the repository root (-m)

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["PRODUCTION_PROFILE", "TinyProductionCache", "build_tiny_production_cache"]

PRODUCTION_PROFILE = ROOT / "configs" / "profiles" / "production.yaml"
OVERLAY_NAME = "production-tiny.yaml"
IMAGE_COLLECTIONS = ("radiology", "pathology", "visual")
_SERVE_KINDS = ("encoder", "cross_encoder", "image_encoder")
#: BiomedCLIP's text tower, by the hub id its published ``open_clip_config.json`` names
#: (the loader reads its config from the cache; see the biomedclip role's comment).
BIOMEDCLIP_TEXT_TOWER = "microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract"


@dataclass(frozen=True)
class TinyProductionCache:
    """What :func:`build_tiny_production_cache` built: the hub cache folder, the overlay
    file and its content, and the hub ids it holds."""

    hub_cache: Path
    overlay_path: Path
    overlay: dict[str, Any]
    repo_ids: tuple[str, ...]


def _hub_id(source: str) -> str:
    return source.removeprefix("hf-hub:")


def build_tiny_production_cache(
    out_dir: Path, image_collections: bool = True, cpu: bool = True
) -> TinyProductionCache:
    """Build the tiny hub cache under ``out_dir/hub`` and the overlay
    ``out_dir/production-tiny.yaml`` (see the module docstring).

    Raises:
        KeyError: the production profile has a role with a hub source this script does
            not know how to build (a new role: add its builder here).
    """
    out_dir = Path(out_dir).resolve()
    profile = yaml.safe_load(PRODUCTION_PROFILE.read_text(encoding="utf-8"))
    roles: dict[str, Any] = profile["models"]["roles"]
    hub = out_dir / "hub"
    staging = out_dir / "staging"
    staging.mkdir(parents=True, exist_ok=True)

    text_width = tiny_models.HIDDEN
    clip_width = tiny_models.CLIP_DIMENSION
    uni2_kwargs = tiny_models.tiny_uni2_kwargs(roles["uni2"]["model_kwargs"])
    text_tower = BIOMEDCLIP_TEXT_TOWER
    bert = tiny_models.build_tiny_bert(staging / "bert")

    # role -> (builder of its folder, tiny output width or None for the cross-encoder)
    builders: dict[str, tuple[Any, int | None]] = {
        "pubmedbert": (lambda folder: bert, text_width),
        "medcpt-query": (lambda folder: bert, text_width),
        "medcpt-article": (lambda folder: bert, text_width),
        "general-text": (tiny_models.build_tiny_mpnet, text_width),
        "molformer": (tiny_models.build_tiny_molformer, text_width),
        "biomedclip": (
            lambda folder: tiny_models.build_tiny_biomedclip(folder, bert, text_tower),
            clip_width,
        ),
        "uni2": (
            lambda folder: tiny_models.build_tiny_uni2_vit(folder, uni2_kwargs),
            uni2_kwargs["embed_dim"],
        ),
        "general-vl": (tiny_models.build_tiny_laion_clip, clip_width),
        "medcpt-rerank": (tiny_models.build_tiny_cross_encoder, None),
    }
    overlay_roles: dict[str, Any] = {}
    repo_ids = [text_tower]
    tiny_models.build_hub_cache(hub, text_tower, bert)
    for role, spec in roles.items():
        builder, width = builders[role]
        folder = builder(staging / role)
        repo_id = _hub_id(spec["source"])
        tiny_models.build_hub_cache(hub, repo_id, folder)
        repo_ids.append(repo_id)
        if width is not None:
            overlay_roles[role] = {"dimension": width}
    overlay_roles["uni2"]["model_kwargs"] = dict(tiny_models.UNI2_TINY_OVERRIDES)
    shutil.rmtree(staging)

    overlay: dict[str, Any] = {"models": {"hf_cache_dir": str(hub), "roles": overlay_roles}}
    if image_collections:
        overlay["pipeline"] = {
            "collections": {name: {"enabled": True} for name in IMAGE_COLLECTIONS}
        }
    if cpu:
        overlay["serve"] = {kind: {"num_gpus": 0, "num_cpus": 0.2} for kind in _SERVE_KINDS}
    overlay_path = out_dir / OVERLAY_NAME
    overlay_path.write_text(
        "# Tiny random production models (scripts/build_tiny_production_cache.py): use with\n"
        f"# biomed-search serve --profile production --config {overlay_path}\n"
        + yaml.safe_dump(overlay, sort_keys=False),
        encoding="utf-8",
    )
    return TinyProductionCache(hub, overlay_path, overlay, tuple(dict.fromkeys(repo_ids)))


def main(argv: list[str] | None = None) -> int:
    """Command line: build the cache and print the overlay."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output folder (hub cache in OUT/hub)")
    parser.add_argument(
        "--no-image-collections", action="store_true", help="keep the image collections off"
    )
    parser.add_argument(
        "--gpu", action="store_true", help="keep the profile's Serve GPU/CPU shares"
    )
    args = parser.parse_args(argv)
    built = build_tiny_production_cache(
        args.out, image_collections=not args.no_image_collections, cpu=not args.gpu
    )
    print(built.overlay_path.read_text(encoding="utf-8"), end="")
    print(f"# {len(built.repo_ids)} repositories in {built.hub_cache}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
