"""The request body as the server hands it over: read as Django needs it when it comes in
chunks, and the rest of a body over the limit read and thrown away before the 413.

Chunked bodies. A body sent without Content-Length (Transfer-Encoding: chunked: an HTTP
client streaming a body, an OTLP exporter gzipping one): Django reads as many bytes of a
request as its Content-Length declares, and a request declaring none as empty: such a
body was refused as if its fields were missing. Under a server that ends the body itself
(gunicorn sets `wsgi.input_terminated`), this wrapper reads it, up to one byte past the
largest body any endpoint takes, and declares what it read: a body within the limits is
served as if its length had been declared, and one past them declares more than the
limit, so the endpoint answers 413 in its own shape, as for a declared length.

A body over the limit. The endpoints answer 413 without reading the body (the API's as
soon as the declared length is over API_MAX_BODY_BYTES, config.middleware; OTLP's when
it finds it over OTLP_MAX_BODY_BYTES, diagnosis.otlp_wire), and gunicorn then closes the
connection with the body still arriving: the kernel resets a connection closed with data
unread, so a client that sends its whole body before it reads (urllib, OTLP exporters,
nginx writing the body it buffered) met a broken pipe, or nginx's HTML 502, which
exporters retry, body and all, instead of the 413. So, as HTTP servers do before they
close ("lingering close"), whatever answers 413 here (or refuses the request in any
way, perhaps before reading it: a key missing on /v1/traces) first has the rest of the body read
and thrown away, bounded in bytes and in time (DRAIN_LIMIT_FACTOR, DRAIN_SECONDS), and
says `Connection: close`. Past either bound the rest is left unread, and the client may
see the reset as before.
"""

import io
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

Environ = dict[str, Any]
WSGIApp = Callable[[Environ, Callable[..., Any]], Iterable[bytes]]

logger = logging.getLogger(__name__)

# A body over the limit is read to its end when it is at most this many times the largest
# body any endpoint takes (10 MiB by default, CASE_IMPORT_MAX_BYTES: 40 MiB in all): a
# batch or a file that overshoots the limit, which is what meets a 413 in practice, is
# read in well under a second from nginx or a client on the network. A body declared
# larger is left unread from the start (reading it costs the worker more than a reset
# costs its client), and a chunked one once it reaches that size.
DRAIN_LIMIT_FACTOR = 4
# Seconds the rest of such a body may take to arrive: a few, far below gunicorn's worker
# timeout (config/gunicorn.conf.py: at least 17 s, 50 s by default), so that a client
# sending slowly cannot keep the worker, and a request never dies of the timeout here.
DRAIN_SECONDS = 5.0
_DRAIN_CHUNK = 64 * 1024


class ChunkedBodyLength:
    """WSGI middleware: `limit` is the largest body any endpoint takes, in bytes."""

    def __init__(self, app: WSGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    def __call__(self, environ: Environ, start_response: Callable[..., Any]) -> Iterable[bytes]:
        # Only a server that ends the body itself reads nothing past it: with another one
        # (runserver) a read past the body would wait for bytes that never come.
        if not environ.get("wsgi.input_terminated"):
            return self.app(environ, start_response)
        stream = environ["wsgi.input"]
        declared = _declared_length(environ)
        already_read = 0
        if (
            not environ.get("CONTENT_LENGTH")
            and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        ):
            body = stream.read(self.limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            already_read = len(body)
        refused: list[bool] = []

        def answer(status: str, headers: list, exc_info: Any = None) -> Any:
            # Any refusal may come before the body is read (a key missing on /v1/traces):
            # what is left of it is read below (nothing, when the endpoint read it all).
            if status[:1] in ("4", "5"):
                refused.append(True)
            if status.startswith("413"):
                # gunicorn's sync worker closes every connection and says so itself (it
                # drops an application's Connection header); a server that keeps
                # connections open must not read the next request from the rest.
                headers = [*headers, ("Connection", "close")]
            return start_response(status, headers, exc_info)

        response = self.app(environ, answer)
        if refused:
            cap = self.limit * DRAIN_LIMIT_FACTOR
            if declared is not None and declared > cap:
                logger.info("refused: the body (%d bytes declared) is left unread", declared)
            else:
                rest_discarded(stream, environ.get("gunicorn.socket"), cap - already_read)
        return response


def _declared_length(environ: Environ) -> int | None:
    try:
        return int(environ.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


def rest_discarded(stream: Any, sock: Any, most: int) -> None:
    """Read what is left of the request body from `stream`, at most `most` bytes and for
    at most DRAIN_SECONDS, and throw it away. `sock` (the connection, when the server
    gives it) waits no longer than the time left for each read."""
    deadline = time.monotonic() + DRAIN_SECONDS
    kept_timeout = sock.gettimeout() if sock is not None else None
    read = 0
    try:
        while True:
            left = deadline - time.monotonic()
            if read >= most or left <= 0:
                logger.info("refused: the rest of the body is left unread after %d bytes", read)
                return
            if sock is not None:
                sock.settimeout(left)
            data = stream.read(min(_DRAIN_CHUNK, most - read))
            if not data:
                return
            read += len(data)
    except Exception as exc:  # whatever the server's reader raises: a reset, a timeout
        logger.info("refused: the rest of the body could not be read (%s)", exc.__class__.__name__)
    finally:
        if sock is not None:
            sock.settimeout(kept_timeout)
