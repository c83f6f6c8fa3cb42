"""The test database migrated to a target the way `manage.py migrate` does it, its
pre_migrate and post_migrate signals included (caselibrary drops and makes its case
triggers in them: a trigger naming a table a backwards migration drops must not outlive
it)."""

from django.apps.registry import Apps
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_to(target: tuple[str, str] | None = None) -> Apps:
    """Migrate to `target` (app label, migration name), or every app to its latest
    migration; the models as they stand there."""
    if target is None:
        call_command("migrate", verbosity=0)
    else:
        call_command("migrate", *target, verbosity=0)
    loader = MigrationExecutor(connection).loader
    return loader.project_state([target] if target else loader.graph.leaf_nodes()).apps
