"""Users and groups are for superusers, as API keys are (config/admin_superuser.py): staff
given `change_user` by hand could otherwise make themselves or anyone a superuser, and
through that open every page no permission opens."""

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from config.admin_icons import yes_no_icon
from config.admin_superuser import SuperuserOnlyAdminMixin


class ConsoleUserAdmin(SuperuserOnlyAdminMixin, UserAdmin):
    list_display = ("username", "email", "first_name", "last_name", "staff_status")

    # Its icon named in the page's language (config/admin_icons.py), not boolean=True.
    @admin.display(description=_("staff status"), ordering="is_staff")
    def staff_status(self, user: Any) -> SafeString:
        return yes_no_icon(user.is_staff)


class ConsoleGroupAdmin(SuperuserOnlyAdminMixin, GroupAdmin):
    pass


def accounts_for_superusers_only(site: admin.AdminSite) -> None:
    """Register the site's user and group pages anew, for superusers only (run after the
    admin found each app's pages: auth's registered them for any staff permitted)."""
    from django.contrib.auth import get_user_model

    for model, model_admin in ((get_user_model(), ConsoleUserAdmin), (Group, ConsoleGroupAdmin)):
        if site.is_registered(model):
            site.unregister(model)
        site.register(model, model_admin)
