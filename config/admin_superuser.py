"""Admin pages for superusers only (API keys, the task queue): no model permission opens
them, so giving a group or an operator `change_apikey` by mistake hands out nothing. The
admin index leaves them out for everyone else; a link to one is a 403."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


def is_superuser(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and user.is_superuser)


class SuperuserOnlyAdminMixin(admin.ModelAdmin):
    """Each permission the admin asks for, granted only to a superuser (and then as the
    model admin grants it: a list that adds nothing stays so)."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_superuser(request) and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return is_superuser(request) and super().has_add_permission(request, *args)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request) and super().has_delete_permission(request, obj)
