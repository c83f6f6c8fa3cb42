"""Rate limits that cost the same at any rate: a counter per client and window.

DRF's SimpleRateThrottle keeps every request's time of the last window in one cache
value, read and written whole on each request: at the default 6,000/min a busy key's
list holds 6,000 floats, about 0.45 ms of pickling per request in process (and 48 KB
each way to Redis), and two processes that read it at once lose one of the two writes.
Here a window is one integer that the cache increments in place (Redis's INCR: exact
across processes). The window starts at a client's first request and lasts the rate's
period; a client may send its limit at the end of one window and again at the start of
the next, which is fine for what these limits are: a guard against a runaway client,
not a security boundary.
"""

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from config.client_address import client_address


class WindowCountThrottle(SimpleRateThrottle):
    """A SimpleRateThrottle (same rates, same `get_cache_key`, Django's default cache)
    counting per window. A limit per address counts the address config.client_address
    finds (`get_ident`): a forged X-Forwarded-For is never a key of its own."""

    def get_ident(self, request: Request) -> str:
        return client_address(request)

    def allow_request(self, request: Request, view: object) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        return self._count() <= self.num_requests

    def _count(self) -> int:
        try:
            return self.cache.incr(self.key)
        except ValueError:  # no window open for this client: this request opens one
            if self.cache.add(self.key, 1, self.duration):
                self.cache.set(f"{self.key}:since", self.now, self.duration)
                return 1
            try:
                return self.cache.incr(self.key)  # another process opened it first
            except ValueError:  # and it closed in between
                return 1

    def wait(self) -> float:
        """Seconds until the client's window closes (the `Retry-After` DRF sends)."""
        since = self.cache.get(f"{self.key}:since", self.now)
        return max(1.0, since + self.duration - self.now)
