"""Users and groups are for superusers, as API keys are (config/admin_superuser.py): staff
given `change_user` by hand could otherwise make themselves or anyone a superuser, and
through that open every page no permission opens."""

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group

from config.admin_superuser import SuperuserOnlyAdminMixin


class ConsoleUserAdmin(SuperuserOnlyAdminMixin, UserAdmin):
    pass


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
