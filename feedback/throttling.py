"""Per-API-key rate limit on /api/feedback.

Counts live in the configured cache: per process with the default in-memory cache,
shared by every process when REDIS_URL is set. A guard against a runaway client, not a
security boundary.
"""

from django.conf import settings
from rest_framework.request import Request

from config.throttling import WindowCountThrottle
from diagnosis.models import ApiKey


class FeedbackKeyThrottle(WindowCountThrottle):
    scope = "feedback"

    def get_rate(self) -> str | None:
        return settings.FEEDBACK_RATE_LIMIT

    def get_cache_key(self, request: Request, view: object) -> str | None:
        if not isinstance(request.auth, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}
