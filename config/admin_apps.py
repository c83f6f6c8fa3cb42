"""Django's admin on the console's own site (config/admin_site.py), the way Django's
documentation replaces the default site: `admin.site` is that site everywhere."""

from django.contrib.admin.apps import AdminConfig


class ConsoleAdminConfig(AdminConfig):
    default_site = "config.admin_site.ConsoleAdminSite"

    def ready(self) -> None:
        super().ready()  # finds each app's admin pages
        from django.contrib import admin

        from config.admin_users import accounts_for_superusers_only

        accounts_for_superusers_only(admin.site)
