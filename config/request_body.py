"""A request body sent without Content-Length (Transfer-Encoding: chunked: an HTTP client
streaming a body, an OTLP exporter gzipping one) read as Django needs it.

Django reads as many bytes of a request as its Content-Length declares, and a request
declaring none as empty: such a body was refused as if its fields were missing. Under a
server that ends the body itself (gunicorn sets `wsgi.input_terminated`), this wrapper
reads it, up to one byte past the largest body any endpoint takes, and declares what it
read: a body within the limits is served as if its length had been declared, and one past
them declares more than the limit, so the endpoint answers 413 in its own shape, as for a
declared length.
"""

import io
from collections.abc import Callable, Iterable
from typing import Any

Environ = dict[str, Any]
WSGIApp = Callable[[Environ, Callable[..., Any]], Iterable[bytes]]


class ChunkedBodyLength:
    """WSGI middleware: `limit` is the largest body any endpoint takes, in bytes."""

    def __init__(self, app: WSGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    def __call__(self, environ: Environ, start_response: Callable[..., Any]) -> Iterable[bytes]:
        if (
            not environ.get("CONTENT_LENGTH")
            and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
            and environ.get("wsgi.input_terminated")
        ):
            body = environ["wsgi.input"].read(self.limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)
