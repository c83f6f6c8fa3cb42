from django.contrib import admin
from django.http import HttpRequest
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from diagnosis.models import ApiKey

# The package's own key model is unused: our ApiKey adds scopes.
admin.site.unregister(APIKey)


@admin.register(ApiKey)
class ApiKeyAdmin(APIKeyModelAdmin):
    list_display = ("prefix", "name", "scope", "created", "expiry_date", "_has_expired", "revoked")
    list_filter = ("scope", "revoked")

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple:
        fields = super().get_readonly_fields(request, obj)
        return (*fields, "scope") if obj is not None and obj.revoked else fields
