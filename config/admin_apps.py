"""Django's admin on the console's own site (config/admin_site.py), the way Django's
documentation replaces the default site: `admin.site` is that site everywhere."""

from django.contrib.admin.apps import AdminConfig


class ConsoleAdminConfig(AdminConfig):
    default_site = "config.admin_site.ConsoleAdminSite"
