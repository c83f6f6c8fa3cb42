"""How `manage.py migrate` waits on MySQL/MariaDB (diagnosis/management/commands/migrate.py).
Read by config/settings.py with a `*` import."""

from config.env import env_int

# A migration's DDL waits this long for the table's metadata lock, then gives up, the
# schema untouched: while it waits, every query on that table queues behind it (a long
# transaction or an idle session holding the table stalled the whole service). Seconds.
MIGRATE_LOCK_WAIT_TIMEOUT = env_int("MIGRATE_LOCK_WAIT_TIMEOUT", 10, minimum=1)
# How long one migration statement may run (an index built on a large table takes
# minutes): the service's DB_READ_TIMEOUT, meant for requests, had ended it half-way.
MIGRATE_READ_TIMEOUT = env_int("MIGRATE_READ_TIMEOUT", 3600, minimum=1)
