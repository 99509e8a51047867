"""What the HTTP server serves besides the API: the dashboard's static files at
``/dashboard/``, ``/`` sending a browser there, and the API docs at ``/docs`` built on
a vendored Swagger UI (``static/swagger/``, swagger-ui-dist 5.35.0, Apache-2.0).

Invariants: nothing served here names another host, so the dashboard and the docs
work offline; files come only from inside their folder (StaticFiles resolves each
path and refuses one that leaves it), a folder is never listed, and every file is
sent with its content type and ``nosniff``.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from assocmem.adapters.dashboard import STATIC_DIR

SWAGGER_DIR = Path(__file__).parent / "static" / "swagger"
SWAGGER_PREFIX = "/static/swagger"
DASHBOARD_PREFIX = "/dashboard"

# Types the platform's table may lack or spell otherwise (it is read from
# /etc/mime.types where present), so a browser never has to guess one.
CONTENT_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".map": "application/json",
}


class Files(StaticFiles):
    """StaticFiles that tell the browser not to sniff another type."""

    def file_response(
        self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope,
        status_code: int = 200,
    ) -> Response:  # fmt: skip
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def mount(app: FastAPI, *, dashboard_dir: Path = STATIC_DIR) -> None:
    """Serve the dashboard (when its folder ships), ``/`` → ``/dashboard/``, the Swagger
    UI assets and ``/docs``. Call on an app made with ``docs_url=None, redoc_url=None``."""
    for suffix, content_type in CONTENT_TYPES.items():
        mimetypes.add_type(content_type, suffix)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(url=f"{DASHBOARD_PREFIX}/", status_code=307)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - API docs",
            swagger_js_url=f"{SWAGGER_PREFIX}/swagger-ui-bundle.js",
            swagger_css_url=f"{SWAGGER_PREFIX}/swagger-ui.css",
            swagger_favicon_url=f"{SWAGGER_PREFIX}/favicon-32x32.png",
            # Its default points the validator badge at validator.swagger.io.
            swagger_ui_parameters={"validatorUrl": None},
        )

    app.mount(SWAGGER_PREFIX, Files(directory=SWAGGER_DIR), name="swagger")
    # The page's files arrive with the dashboard; until then /dashboard/ is a 404.
    if dashboard_dir.is_dir():
        app.mount(DASHBOARD_PREFIX, Files(directory=dashboard_dir, html=True), name="dashboard")
