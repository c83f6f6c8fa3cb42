"""The base of every /api/ view set, shared by the apps that serve one: it lives with
the API keys it checks, in the lowest app that has views."""

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
        # Machines read these messages (and grep logs for them): one language,
        # whatever LANGUAGE_CODE the admin is shown in.
        with translation.override("en"):
            return super().dispatch(request, *args, **kwargs)
