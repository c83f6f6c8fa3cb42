"""The API's JSON renderer (a module of its own: DRF reads it from the settings while
its views are imported)."""

from typing import Any

from rest_framework import renderers


class JSONRenderer(renderers.JSONRenderer):
    """DRF's, with Chinese as UTF-8; a body holding a lone surrogate (a refused key or
    value quoted back in a 400) has no UTF-8 form and is written with \\u escapes, still
    JSON, instead of failing as a 500."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict | None = None,
    ) -> bytes:
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            escaped = renderers.JSONRenderer()
            escaped.ensure_ascii = True
            return escaped.render(data, accepted_media_type, renderer_context)
