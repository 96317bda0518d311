"""``biomed-search query``: search a running service and print a ranked table."""

from __future__ import annotations

import json
from collections.abc import Sequence

import httpx
from rich.console import Console
from rich.table import Table

__all__ = ["query"]


def query(
    url: str,
    text: str,
    kb_ids: Sequence[str] = (),
    page_size: int = 5,
    api_key: str | None = None,
    raw: bool = False,
) -> int:
    """POST ``/v1/search`` and print name, section, score and its parts. Returns 0 on
    success, 1 on an HTTP error (printed)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body = {"query": text, "page_size": page_size, "kb_ids": list(kb_ids)}
    console = Console()
    try:
        response = httpx.post(
            f"{url.rstrip('/')}/v1/search", json=body, headers=headers, timeout=60.0
        )
    except httpx.HTTPError as error:
        console.print(f"[red]cannot reach {url}: {error}[/red]")
        return 1
    if response.status_code != 200:
        console.print(f"[red]HTTP {response.status_code}[/red] {response.text}")
        return 1
    data = response.json()
    if raw:
        print(json.dumps(data, indent=2))
        return 0
    intent = data["intent"]
    route = ", ".join(f"{p['collection']}/{p['encoder']}" for p in data["route"])
    corrected = intent.get("corrections") or []
    console.print(
        f"workflow [bold]{intent['workflow']}[/bold]  cues {intent['section_cues']}  "
        + (f"corrected {', '.join(corrected)}  " if corrected else "")
        + f"route {route}  total {data['total']}"
    )
    table = Table(show_lines=False)
    for column in ("#", "document", "section", "score", "ce", "entity", "section", "xdrug", "text"):
        table.add_column(column, overflow="fold")
    for rank, chunk in enumerate(data["chunks"], start=1):
        parts = chunk["score_parts"]

        def fmt(value: float | None) -> str:
            return "" if value is None else f"{value:.2f}"

        table.add_row(
            str(rank),
            chunk["document_name"],
            chunk["biomed_section"],
            f"{chunk['similarity']:.3f}",
            fmt(parts.get("ce")),
            fmt(parts.get("entity")),
            fmt(parts.get("section")),
            fmt(parts.get("xdrug")),
            chunk["content"][:120].replace("\n", " | "),
        )
    console.print(table)
    stages = "  ".join(f"{s['name']} {s['ms']:.0f}ms" for s in data["trace"])
    console.print(f"[dim]{stages}[/dim]")
    return 0
