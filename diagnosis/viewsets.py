"""The base of every /api/ view set, shared by the apps that serve one.

It lives with the API keys it checks: every app above diagnosis may build on it.
"""

from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils import translation
from rest_framework import viewsets

from diagnosis.apikeys import ApiKeyAuthentication, HasApiPermission


class ApiViewSet(viewsets.ViewSet):
    """Every /api/ endpoint: API key required, scope checked per action."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasApiPermission]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # The field rules in an error's `errors` are read by programs (and grepped for in
        # logs): one language, whatever LANGUAGE_CODE the admin is shown in. The
        # `message` people read is Chinese (config/api.py).
        with translation.override("en"):
            return super().dispatch(request, *args, **kwargs)
