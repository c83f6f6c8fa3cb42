"""Failing fast while the Milvus server is unavailable.

A server that hangs (a stopped process, a network black hole) takes connections and never
answers: each call waits its whole MILVUS_TIMEOUT, and a search makes two in a row. Once a
call has failed so (timed out, or the server could not be reached), the backend's calls
fail at once with the same message for MILVUS_RETRY_SECONDS, without calling the server;
then one call tries it again (the others still fail at once while it runs), and its
success ends the outage. A search during an outage thus waits at most one timeout per
quiet time and process, and answers without the index as before.

A request the server answered and refused (a bad request, a schema the collection does not
have) says the server is there: it ends the outage instead.
"""

from __future__ import annotations

import threading
import time

# gRPC status codes of a server that did not answer in time or could not be reached.
_UNREACHED = frozenset({"DEADLINE_EXCEEDED", "UNAVAILABLE"})


class Breaker:
    """Per backend: the outage it is in, if any, and when to try the server again."""

    def __init__(self, quiet_seconds: float) -> None:
        self.quiet_seconds = quiet_seconds
        self._lock = threading.Lock()
        self._failure: str | None = None
        self._retry_at = 0.0
        self._trying: int | None = None  # the thread trying the server again

    def refusal(self) -> str | None:
        """The last failure's message when a call must fail without calling the server;
        None when it may call (no outage, or the quiet time is over and no other thread
        is trying already: this one does)."""
        with self._lock:
            if self._failure is None:
                return None
            me = threading.get_ident()
            if self._trying == me:  # the call trying the server, calling back into it
                return None
            if self._trying is not None or time.monotonic() < self._retry_at:
                return self._failure
            self._trying = me
            return None

    def unreachable(self, message: str) -> None:
        """A call failed for the server's unavailability: quiet time from now."""
        with self._lock:
            self._failure = message
            self._retry_at = time.monotonic() + self.quiet_seconds
            self._trying = None

    def answered(self) -> None:
        """The server answered a call (with its result or a refusal): the outage is over."""
        with self._lock:
            self._failure, self._trying = None, None

    def released(self) -> None:
        """A call ended without saying whether the server answers (an error of this
        project's code): the next call may try the server."""
        with self._lock:
            if self._trying == threading.get_ident():
                self._trying = None


def unreached(exc: BaseException) -> bool:
    """Whether `exc` (a client error) says the server did not answer: a timeout, a
    connection refused or lost, a server that could not be reached, at any depth of the
    errors it was raised from."""
    import grpc
    from pymilvus.client.types import Status
    from pymilvus.exceptions import MilvusException

    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, (ConnectionError, TimeoutError)):
            return True
        if isinstance(error, OSError) and error.errno is not None:
            return True
        code = getattr(error, "code", None)
        if callable(code):  # a grpc.RpcError
            if getattr(code(), "name", None) in _UNREACHED:
                return True
        elif isinstance(error, MilvusException) and error.code == Status.CONNECT_FAILED:
            return True
        if isinstance(error, grpc.FutureTimeoutError):  # the wait for a channel
            return True
        error = error.__cause__ or error.__context__
    return False
