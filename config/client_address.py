"""The client's address, as every per-address limit counts it and the log lines name it:
the feedback API's rate limit per address (config.throttling), the admin login's lockout
(config.login_guard).

Behind TRUSTED_PROXY_COUNT proxies (REST_FRAMEWORK's NUM_PROXIES is read from it), it is
the entry of X-Forwarded-For that the first of them appended, when that entry is an IP
address; else, and without trusted proxies, the connection's address (REMOTE_ADDR).
Anything else there was the client's own text, sent past a proxy that appends rather
than replaces: taken as it was, a 4,000-character value became a cache key (a warning on
stderr for each, a 4 KB key in Redis) and a count of its own, beside its address's limit.
"""

import ipaddress

from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.settings import api_settings


def client_address(request: HttpRequest | Request) -> str:
    """The client's address (see above); "" when the server gives none."""
    connection = request.META.get("REMOTE_ADDR") or ""
    proxies = api_settings.NUM_PROXIES or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return connection
    entries = forwarded.split(",")
    return _ip_address(entries[-min(proxies, len(entries))]) or connection


def _ip_address(text: str) -> str | None:
    """`text` as an IP address in its usual form (2001:DB8:0::1 is 2001:db8::1), or None
    when it is none. An IPv6 zone (fe80::1%eth0) names an interface of the sender's own
    machine, no client's address, and may be text of any length: not one either."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if getattr(address, "scope_id", None) is not None:
        return None
    return str(address)
