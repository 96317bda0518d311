"""The retrieval-testing page: plain HTML, CSS and JavaScript shipped in this package
(``static/``), served by the ingress at ``/`` (``/ui/`` redirects there) with its assets
under ``/ui/``. No build step and nothing from a CDN; the page talks to the same JSON
API as any client (``/v1/search``, ``/v1/search/image``, ``/v1/collections``).

Behind a Serve route prefix the page is at ``<prefix>/``: the HTML gets a ``<base>``
element pointing at the prefix, so every relative asset and API URL resolves under it.
"""

from __future__ import annotations

import html
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["STATIC_DIR", "mount_ui"]

#: The page's files: ``index.html``, ``app.js``, ``style.css``.
STATIC_DIR = Path(__file__).parent / "static"

#: Nothing but the page's own files may run or load (no inline script, no CDN).
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; form-action 'self'; base-uri 'self'; frame-ancestors 'none'"
)
_BASE_MARK = "<!--base-->"


def _page(root_path: str) -> str:
    """``index.html`` with ``<base href="<root_path>/">`` in place of its marker."""
    text = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    base = html.escape(root_path.rstrip("/") + "/", quote=True)
    return text.replace(_BASE_MARK, f'<base href="{base}">', 1)


def mount_ui(app: FastAPI) -> None:
    """Add ``GET /`` (the page) and ``/ui/*`` (its assets) to ``app``.

    Only these two paths are taken: ``/v1/...``, ``/docs``, ``/healthz`` and ``/readyz``
    are matched exactly as before. ``/ui`` and ``/ui/`` redirect to the page.
    """

    @app.get("/ui", include_in_schema=False)
    @app.get("/ui/", include_in_schema=False)
    async def ui_index(request: Request) -> RedirectResponse:
        """The assets' folder itself: the page is at the root (under any route prefix)."""
        return RedirectResponse(str(request.scope.get("root_path", "")).rstrip("/") + "/")

    app.mount("/ui", StaticFiles(directory=STATIC_DIR), name="ui")

    @app.get("/", include_in_schema=False, response_class=HTMLResponse)
    async def retrieval_page(request: Request) -> HTMLResponse:
        """The retrieval-testing page (HTML)."""
        return HTMLResponse(
            _page(str(request.scope.get("root_path", ""))),
            headers={"Content-Security-Policy": _CSP, "Cache-Control": "no-cache"},
        )
