"""A private MariaDB server for tests that stop and start their database.

The shared server on 127.0.0.1:3306 is never stopped: other test runs use it.
"""

import shutil
import signal
import subprocess
from pathlib import Path

from tests.processes import free_port, wait_for

MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB = shutil.which("mariadb-install-db") or "/usr/bin/mariadb-install-db"


class PrivateMariaDB:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.datadir = directory / "data"
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def install(self) -> None:
        subprocess.run(
            [
                INSTALL_DB,
                "--no-defaults",
                f"--datadir={self.datadir}",
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def binary_log_options(self) -> list[str]:
        """The server's binary log: none (a subclass writes one)."""
        return ["--skip-log-bin"]

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                MARIADBD,
                "--no-defaults",
                "--user=root",
                f"--datadir={self.datadir}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                f"--socket={self.directory / 'mariadb.sock'}",
                f"--pid-file={self.directory / 'mariadb.pid'}",
                f"--log-error={self.directory / 'error.log'}",
                *self.binary_log_options(),
                "--innodb-buffer-pool-size=64M",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_unicode_ci",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(self.answers, timeout=60, what="the private MariaDB to start")

    def stop(self) -> None:
        """A clean shutdown (SIGTERM), waited for."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def answers(self) -> bool:
        result = subprocess.run(
            [
                "mariadb-admin",
                "--protocol=tcp",
                "-h127.0.0.1",
                f"-P{self.port}",
                "-uroot",
                "status",
            ],
            capture_output=True,
            timeout=10,
        )
        return result.returncode == 0

    def sql(self, statement: str) -> None:
        subprocess.run(
            [
                "mariadb",
                "--protocol=tcp",
                "-h127.0.0.1",
                f"-P{self.port}",
                "-uroot",
                "-e",
                statement,
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )

    def url(self, database: str) -> str:
        return f"mysql://root@127.0.0.1:{self.port}/{database}"
