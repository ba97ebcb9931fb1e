"""A throwaway PostgreSQL server for tests: Debian's binaries, a temporary data folder, a unix socket, no TCP.

initdb refuses to run as root, so as root the server runs as ``nobody`` (util-linux
setpriv) in folders that user owns. ``find_binaries`` says why a test must skip.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

NOBODY = 65534  # uid and gid the server runs as when the tests run as root
START_SECONDS = 60  # pg_ctl's wait for the server to accept connections


@dataclass
class PostgresServer:
    """A running server; ``url(db)`` is an SQLAlchemy URL that reaches it through its unix socket."""

    bin_dir: Path  # initdb, pg_ctl, createdb
    root: Path  # holds data/ and the socket folder; removed by stop()
    port: int  # names the socket file (.s.PGSQL.<port>); nothing listens on TCP

    def _as_owner(self, *argv: str) -> subprocess.CompletedProcess:
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if os.geteuid() == 0 else []
        return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"})

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def start(self) -> None:
        data = self.root / "data"
        for step in ([str(self.bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                      "-E", "UTF8", "--no-sync"],
                     [str(self.bin_dir / "pg_ctl"), "-D", str(data), "-l", str(self.root / "server.log"), "-w",
                      "-t", str(START_SECONDS), "-o",
                      f"-c listen_addresses='' -k {self.socket_dir} -p {self.port} -c fsync=off", "start"]):
            done = self._as_owner(*step)
            if done.returncode != 0:
                log = (self.root / "server.log").read_text() if (self.root / "server.log").exists() else ""
                raise RuntimeError(f"{Path(step[0]).name} failed: {done.stdout[-1000:]}{done.stderr[-1000:]}{log}")

    def create_database(self, name: str) -> str:
        done = self._as_owner(str(self.bin_dir / "createdb"), "-h", str(self.socket_dir), "-p", str(self.port),
                              "-U", "postgres", name)
        if done.returncode != 0:
            raise RuntimeError(f"createdb failed: {done.stderr[-1000:]}")
        return self.url(name)

    def url(self, database: str) -> str:
        return f"postgresql+psycopg2://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def stop(self) -> None:
        self._as_owner(str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def find_binaries() -> tuple[Path | None, str]:
    """The folder with initdb and pg_ctl, or None and why not."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent, ""
    if shutil.which("initdb") and shutil.which("pg_ctl"):
        return Path(shutil.which("initdb")).parent, ""
    return None, "PostgreSQL's server binaries are not installed (Debian: apt-get install postgresql)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server() -> PostgresServer:
    bin_dir, why = find_binaries()
    if bin_dir is None:
        raise RuntimeError(why)
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        raise RuntimeError("as root the server runs as nobody through setpriv (apt-get install util-linux)")
    root = Path(tempfile.mkdtemp(prefix="pg-test-"))  # under /tmp, not pytest's root-only folder: nobody reaches it
    (root / "socket").mkdir()
    if os.geteuid() == 0:
        for path in (root, root / "socket"):
            os.chown(path, NOBODY, NOBODY)
    server = PostgresServer(bin_dir, root, _free_port())
    try:
        server.start()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    for _ in range(50):  # pg_ctl -w waited for it; the socket file appears with it
        if (server.socket_dir / f".s.PGSQL.{server.port}").exists():
            break
        time.sleep(0.1)
    return server
