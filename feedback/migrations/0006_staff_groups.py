"""The staff groups of the admin console, with their model permissions.

reviewer: works the bad-case queues (review, assign, tag); reads everything else.
curator:  edits cases and fault categories (and makes cases from corrections); reads the rest.
viewer:   reads everything, changes nothing.

Give a staff user one or more of these groups in the admin (Users -> Groups). Running
this again leaves the groups as it defines them; permissions added by hand to other
groups are untouched.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

READ = [
    ("diagnosis", "diagnosissession"),
    ("diagnosis", "toolinvocation"),
    ("diagnosis", "span"),
    ("diagnosis", "toolcatalogentry"),
    ("feedback", "badcase"),
    ("feedback", "usefulwithoutevidence"),
    ("feedback", "badcasereview"),
    ("feedback", "feedbackentry"),
    ("feedback", "reviewtag"),
    ("caselibrary", "caselibrary"),
    ("caselibrary", "faultcategory"),
]
VIEW = [(app, f"view_{model}") for app, model in READ]
GROUPS = {
    "viewer": VIEW,
    "reviewer": [
        *VIEW,
        ("feedback", "change_badcase"),
        ("feedback", "change_badcasereview"),
        ("feedback", "add_reviewtag"),
        ("feedback", "change_reviewtag"),
    ],
    "curator": [
        *VIEW,
        ("caselibrary", "add_caselibrary"),
        ("caselibrary", "change_caselibrary"),
        ("caselibrary", "delete_caselibrary"),
        ("caselibrary", "add_faultcategory"),
        ("caselibrary", "change_faultcategory"),
        ("caselibrary", "delete_faultcategory"),
    ],
}


def make_groups(apps, schema_editor):
    # Permissions are made after `migrate` finishes (post_migrate): make them now, so a
    # fresh database gets its groups in the same run.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, wanted in GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        permissions = [
            Permission.objects.get(content_type__app_label=app, codename=codename)
            for app, codename in wanted
        ]
        group.permissions.add(*permissions)


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=list(GROUPS)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0005_review_queue_assignee_and_tags"),
        ("caselibrary", "0008_structured_until"),
        ("diagnosis", "0006_otlp_spans_and_tool_catalog"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(make_groups, remove_groups)]
