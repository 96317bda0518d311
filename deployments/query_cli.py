"""``biomed-search query``: search a running service, or with none reachable the data
directory in-process (the stores of ``--data-dir`` and the profile's local models, as
``biomed-search eval`` does), and print the ranked results.

The results stay readable in an 80-column terminal: each result is one header line
(rank, score, score parts, document and section; cut with an ellipsis, never wrapped)
with its text on full-width lines below it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import httpx
from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from deployments.config import AppConfig
from pipeline.errors import BackendUnavailable, InvalidRequest

__all__ = ["TEXT_CHARS", "query", "render_results", "search_in_process"]

#: Characters of a result's text printed (cut at a word, then an ellipsis).
TEXT_CHARS = 320
_INDENT = 5
_HEADER = f"{'#':>3}  {'score':>5}  {'ce':>5} {'entity':>6} {'section':>7} {'xdrug':>5}  "


def _part(value: float | None, width: int) -> str:
    return f"{'' if value is None else f'{value:.2f}':>{width}}"


def _snippet(content: str, limit: int = TEXT_CHARS) -> str:
    text = " ".join(content.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut + " …"


def _fit(name: str, room: int) -> Text:
    """``name`` cut to ``room`` terminal cells with an ellipsis (a wide character takes
    two), so that the section after it stays on the line; never below 24 cells, which
    keep a product and its active substance readable (the section is cut then)."""
    text = Text(name, style="bold")
    text.truncate(max(room, 24), overflow="ellipsis")
    return text


def render_results(data: dict[str, Any], console: Console) -> None:
    """Print a ``SearchResponse`` body (JSON form, as ``POST /v1/search`` answers) on
    ``console``: the intent and route line, a column header, then per result a header
    line (rank, similarity, score parts ``ce`` / ``entity`` / ``section`` / ``xdrug``,
    document name and section; no wrapping: a long document name is cut with an ellipsis
    so that the section stays visible) and its text (whitespace
    collapsed, at most :data:`TEXT_CHARS` characters) wrapped on lines of the console's
    width indented by 5; the response's warnings; last the per-stage timings of the
    trace."""
    intent = data.get("intent") or {}
    route = ", ".join(f"{p['collection']}/{p['encoder']}" for p in data.get("route") or [])
    corrected = intent.get("corrections") or []
    summary = Text.assemble(
        "workflow ",
        (str(intent.get("workflow", "")), "bold"),
        f"  cues {intent.get('section_cues', [])}",
        " (inferred)  " if intent.get("section_cues_implied") else "  ",
        f"corrected {', '.join(corrected)}  " if corrected else "",
        f"route {route}  total {data.get('total', 0)}",
    )
    console.print(summary)
    chunks = data.get("chunks") or []
    if not chunks:
        console.print("no results")
    else:
        console.print(Text(_HEADER + "document / section", style="bold"), no_wrap=True)
    for rank, chunk in enumerate(chunks, start=1):
        parts = chunk.get("score_parts") or {}
        header = Text(
            f"{rank:>3}  {chunk['similarity']:.3f}  {_part(parts.get('ce'), 5)} "
            f"{_part(parts.get('entity'), 6)} {_part(parts.get('section'), 7)} "
            f"{_part(parts.get('xdrug'), 5)}  "
        )
        section = f" / {chunk['biomed_section']}" if chunk.get("biomed_section") else ""
        room = console.width - header.cell_len - cell_len(section)
        header.append_text(_fit(chunk["document_name"], room))
        header.append(section)
        console.print(header, no_wrap=True, overflow="ellipsis")
        console.print(Padding(Text(_snippet(chunk["content"])), (0, 0, 0, _INDENT)))
    for warning in data.get("warnings") or []:
        console.print(Text(f"warning: {warning}", style="yellow"))
    stages = "  ".join(f"{s['name']} {s['ms']:.0f}ms" for s in data.get("trace") or [])
    console.print(Text(stages, style="dim"))


def _quiet_model_loading() -> None:
    """No weight-loading progress bars: the one stderr line says what happens."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # a profile without transformers models
        return
    transformers_logging.disable_progress_bar()


async def _search(config: AppConfig, body: dict[str, Any]) -> dict[str, Any]:
    from deployments.inprocess import in_process_service
    from deployments.service import Principal
    from pipeline.request_checks import check_request
    from pipeline.schema import SearchRequest

    # the configured bounds too before the stores and models start (seconds, not ms)
    request = check_request(config.pipeline, SearchRequest.model_validate(body))
    async with in_process_service(config) as running:
        principal = Principal(name="local", kb_ids=None, admin=True)
        response = await running.service.search(request, principal)
    return response.model_dump(mode="json", by_alias=True)


def search_in_process(config: AppConfig, body: dict[str, Any]) -> dict[str, Any]:
    """Run one ``POST /v1/search`` body in this process over the stores of ``config``
    (the embedded servers of its data directory, started and stopped here, or the
    configured ones) with local models; no API key applies (the caller reads the data
    directory directly). Returns the response body as the HTTP API would.

    Raises:
        ValueError: the body is not a valid ``SearchRequest`` (pydantic names the field).
        pipeline.errors.InvalidRequest: a bound of the configuration is exceeded (checked
            before the stores start).
        pipeline.errors.BackendUnavailable: a store does not come up.
        models.errors.ModelNotAvailableError: a model cannot be loaded.
    """
    _quiet_model_loading()
    return asyncio.run(_search(config, body))


def _has_local_data(config: AppConfig) -> bool:
    external = config.stores.milvus_uri is not None and config.stores.postgres_dsn is not None
    return external or config.data_dir.is_dir()


def query(
    url: str,
    text: str,
    kb_ids: Sequence[str] = (),
    page_size: int = 5,
    api_key: str | None = None,
    raw: bool = False,
    config: AppConfig | None = None,
) -> int:
    """POST ``/v1/search`` to ``url`` and print the results (:func:`render_results`, or
    the JSON body with ``raw``). When nothing listens at ``url`` and ``config`` is given
    with a data directory that exists (or external stores), search it in-process
    (:func:`search_in_process`) and say so in one line on stderr. Returns 0 on success,
    1 on an HTTP or store error (printed on stderr).

    Raises:
        ValueError: an invalid request, in-process (pydantic names the field).
        models.errors.ModelNotAvailableError: in-process, a model cannot be loaded.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body = {"query": text, "page_size": page_size, "kb_ids": list(kb_ids)}
    console, errors = Console(), Console(stderr=True)
    try:
        response = httpx.post(
            f"{url.rstrip('/')}/v1/search", json=body, headers=headers, timeout=60.0
        )
    except httpx.ConnectError as error:
        if config is None or not _has_local_data(config):
            where = f"; no data dir at {config.data_dir}" if config is not None else ""
            errors.print(
                Text(
                    f"cannot reach {url}: {error}{where} (start `biomed-search serve`, "
                    "or ingest documents with `biomed-search ingest`)",
                    style="red",
                )
            )
            return 1
        print(
            f"no service at {url}: answering in-process from {config.data_dir}",
            file=sys.stderr,
            flush=True,
        )
        try:
            data = search_in_process(config, body)
        except InvalidRequest as invalid:  # as the service's 422 would say
            errors.print(Text(f"invalid request: {invalid}", style="red"))
            return 1
        except BackendUnavailable as store_error:
            errors.print(Text(f"in-process search failed: {store_error}", style="red"))
            return 1
    except httpx.HTTPError as error:
        errors.print(Text(f"cannot reach {url}: {error}", style="red"))
        return 1
    else:
        if response.status_code != 200:
            errors.print(Text(f"HTTP {response.status_code} ", style="red"), Text(response.text))
            return 1
        data = response.json()
    if raw:
        print(json.dumps(data, indent=2))
        return 0
    render_results(data, console)
    return 0
