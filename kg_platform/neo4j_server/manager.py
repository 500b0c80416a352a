"""Lifecycle of the local Neo4j server: obtain, configure, start, wait, stop, report.

Layout of a server home (``<data_dir>/neo4j`` by default, a temp dir with ``ephemeral=True``)::

    conf/neo4j.conf     written on every start from the settings
    data/ logs/ run/    Neo4j's own directories
    password            the generated password of user ``neo4j`` (mode 0600)
    server.json         pid, ports and version of the running process

The jars live in ``<cache_dir>/neo4j-<version>/lib`` so a clone, a ``make clean`` or a new
virtualenv never downloads them again.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from kg_platform._process import free_port, pid_alive as _pid_alive, port_open as _port_open
from kg_platform.config import Settings, get_settings
from kg_platform.errors import Neo4jServerError

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_ENTRY_POINT = "org.neo4j.server.startup.Neo4jAdminCommand"
USER = "neo4j"


def new_password() -> str:
    """A random password that is safe on every command line we build.

    ``secrets.token_urlsafe`` may start with ``-``; given as the value of an option such as
    ``set-initial-password -abc`` it is read as another option, and the first server start fails
    about one time in 64. Drawing again until the first character is alphanumeric keeps the
    entropy of the rest.
    """
    while True:
        candidate = secrets.token_urlsafe(18)
        if candidate[0].isalnum():
            return candidate


@dataclass
class ServerStatus:
    running: bool
    pid: int | None
    version: str
    home: str
    bolt_uri: str | None
    browser_url: str | None
    log_file: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


class LocalNeo4j:
    """One local Neo4j server home. Cheap to construct; nothing happens until a method runs."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        home: Path | None = None,
        ephemeral: bool = False,
        bolt_port: int | None = None,
        http_port: int | None = None,
    ) -> None:
        self.settings = settings or get_settings()
        cfg = self.settings.neo4j
        self.ephemeral = ephemeral
        if ephemeral and home is None:
            home = Path(tempfile.mkdtemp(prefix="kgp-neo4j-"))
        self.home = Path(home or self.settings.neo4j_home)
        self.version = cfg.version
        self.bolt_port = bolt_port or (free_port() if ephemeral else cfg.bolt_port)
        self.http_port = http_port or (free_port() if ephemeral else cfg.http_port)
        self.lib_dir = self.settings.cache_dir / f"neo4j-{self.version}" / "lib"

    # ----------------------------------------------------------------- paths
    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def state_file(self) -> Path:
        return self.home / "server.json"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "neo4j.log"

    @property
    def console_log(self) -> Path:
        return self.home / "logs" / "console.log"

    @property
    def classpath_extra(self) -> Path:
        """A directory put first on the server's class path. Neo4j serves the class-path folder
        ``browser/`` at ``/browser/`` (first match only), so ``classpath-extra/browser/`` holds a
        copy of Neo4j Browser plus the kg-platform guide and style sheet, which then load from the
        same origin as Browser itself. Shared by all servers of this Neo4j version (cache)."""
        return self.lib_dir.parent / "classpath-extra"

    def _install_browser_assets(self) -> bool:
        """Put Browser + the kg-platform guide into :attr:`classpath_extra`. A guide that cannot be
        written is logged and never stops the server (it then serves plain Browser)."""
        try:
            from kg_platform.browser.guide import install_assets

            install_assets(self.classpath_extra / "browser", self.lib_dir)
            return True
        except Exception as exc:  # noqa: BLE001 - the database matters more than the guide
            logging.getLogger(__name__).warning("Browser guide not installed: %s", exc)
            return False

    # ------------------------------------------------------------- download
    def ensure_jars(self) -> Path:
        """Copy the server's jars from Maven Central into the cache (once per version)."""
        marker = self.lib_dir / ".complete"
        if marker.exists():
            return self.lib_dir
        mvn = shutil.which("mvn")
        if not mvn:
            raise Neo4jServerError(
                "Maven is needed once to fetch Neo4j from Maven Central",
                hint="apt-get install -y maven (or set NEO4J_URI to use an existing server)",
            )
        self.lib_dir.mkdir(parents=True, exist_ok=True)
        pom = resources.files("kg_platform.neo4j_server").joinpath("pom.xml")
        with resources.as_file(pom) as pom_path:
            cmd = [
                mvn,
                "-B",
                "-q",
                "-f",
                str(pom_path),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={self.lib_dir}",
                "-DincludeScope=runtime",
                f"-Dneo4j.version={self.version}",
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-2000:]
            raise Neo4jServerError(
                f"could not fetch Neo4j {self.version} from Maven Central:\n{tail}",
                hint="check that Maven Central is reachable; the version is KGP_NEO4J__VERSION",
            )
        marker.write_text(self.version)
        return self.lib_dir

    # ---------------------------------------------------------------- state
    def _read_state(self) -> dict | None:
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None

    def password(self) -> str:
        """The server's password, generated on first use and kept with mode 0600."""
        if self.password_file.exists():
            return self.password_file.read_text().strip()
        self._private_home()
        pw = new_password()
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(pw)
        return pw

    def status(self) -> ServerStatus:
        state = self._read_state()
        running = bool(state and _pid_alive(int(state["pid"])))
        bolt = state["bolt_port"] if state else self.bolt_port
        http = state["http_port"] if state else self.http_port
        return ServerStatus(
            running=running,
            pid=int(state["pid"]) if running and state else None,
            version=(state or {}).get("version", self.version),
            home=str(self.home),
            bolt_uri=f"bolt://127.0.0.1:{bolt}" if running else None,
            browser_url=f"http://127.0.0.1:{http}/browser/" if running else None,
            log_file=str(self.log_file),
        )

    def bolt_uri(self) -> str:
        state = self._read_state()
        port = state["bolt_port"] if state else self.bolt_port
        return f"bolt://127.0.0.1:{port}"

    # ---------------------------------------------------------------- start
    def _private_home(self) -> None:
        """Create the home folder with mode 0700: the store, the auth file and the password
        inside it are readable by this user only (Neo4j itself writes them 0644)."""
        self.home.mkdir(parents=True, exist_ok=True)
        os.chmod(self.home, 0o700)

    def _write_conf(self) -> None:
        cfg = self.settings.neo4j
        self._private_home()
        conf_dir = self.home / "conf"
        conf_dir.mkdir(parents=True, exist_ok=True)
        for sub in ("data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        lines = {
            "server.directories.data": self.home / "data",
            "server.directories.logs": self.home / "logs",
            "server.directories.run": self.home / "run",
            "server.directories.plugins": self.home / "plugins",
            "server.directories.import": self.home / "import",
            "server.default_listen_address": "127.0.0.1",
            "server.default_advertised_address": "127.0.0.1",
            "server.bolt.listen_address": f"127.0.0.1:{self.bolt_port}",
            "server.bolt.advertised_address": f"127.0.0.1:{self.bolt_port}",
            "server.http.listen_address": f"127.0.0.1:{self.http_port}",
            "server.http.advertised_address": f"127.0.0.1:{self.http_port}",
            "server.https.enabled": "false",
            "server.memory.heap.initial_size": cfg.heap,
            "server.memory.heap.max_size": cfg.heap,
            "server.memory.pagecache.size": cfg.pagecache,
            "dbms.usage_report.enabled": "false",
            "db.logs.query.enabled": "OFF",
            # Bolt's two Netty event-loop groups would each wait a 5 s quiet period for new tasks
            # on shutdown, after the databases have stopped and checkpointed and every
            # connection is closed: idle time in every stop and each `kgp neo4j dump`/`load`.
            "internal.dbms.bolt.netty_server_shutdown_quiet_period": 0,
        }
        text = "# written by kgp neo4j start; edits are overwritten\n"
        text += "".join(f"{k}={v}\n" for k, v in lines.items())
        (conf_dir / "neo4j.conf").write_text(text)

    def _java(self) -> str:
        java = shutil.which("java")
        if not java:
            raise Neo4jServerError(
                "Java 17 is needed to run Neo4j 5.26",
                hint="apt-get install -y openjdk-17-jre-headless",
            )
        return java

    def _set_initial_password(self, java: str) -> None:
        if (self.home / "data" / "dbms" / "auth.ini").exists() or (
            self.home / "data" / "databases" / "system"
        ).exists():
            return
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.home / "conf")}
        # The password goes through a 0600 argument file (picocli's @file), never on the
        # command line, where any local user could read it in the process list.
        args = self.home / "run" / "initial-password.args"
        args.parent.mkdir(parents=True, exist_ok=True)
        args.unlink(missing_ok=True)
        fd = os.open(args, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        quoted = self.password().replace("\\", "\\\\").replace('"', '\\"')
        with os.fdopen(fd, "w") as fh:
            fh.write(f'"{quoted}"\n')
        try:
            proc = subprocess.run(
                [
                    java,
                    "-cp",
                    f"{self.lib_dir}/*",
                    ADMIN_ENTRY_POINT,
                    "dbms",
                    "set-initial-password",
                    f"@{args}",
                ],
                env=env,
                capture_output=True,
                text=True,
                check=False,
                umask=0o077,
            )
        finally:
            args.unlink(missing_ok=True)
        if proc.returncode != 0:
            raise Neo4jServerError(f"could not set the initial password: {proc.stderr[-1000:]}")

    def start(self, *, wait: bool = True) -> ServerStatus:
        """Start the server; refuse when this home already runs one."""
        current = self.status()
        if current.running:
            raise Neo4jServerError(
                f"Neo4j is already running from {self.home} (pid {current.pid}) at {current.bolt_uri}",
                hint="use `kgp neo4j status`, or `kgp neo4j stop` first",
            )
        for port in (self.bolt_port, self.http_port):
            if _port_open(port):
                raise Neo4jServerError(
                    f"port {port} on 127.0.0.1 is taken by another process",
                    hint="set KGP_NEO4J__BOLT_PORT / KGP_NEO4J__HTTP_PORT to free ports",
                )
        java = self._java()
        self.ensure_jars()
        self._write_conf()
        self._set_initial_password(java)
        classpath = f"{self.lib_dir}/*"
        if self._install_browser_assets():
            classpath = f"{self.classpath_extra}{os.pathsep}{classpath}"
        cfg = self.settings.neo4j
        cmd = [
            java,
            f"-Xms{cfg.heap}",
            f"-Xmx{cfg.heap}",
            "-XX:+UseG1GC",
            "-Dfile.encoding=UTF-8",
            "-Djava.awt.headless=true",
            "-cp",
            classpath,
            ENTRY_POINT,
            f"--home-dir={self.home}",
            f"--config-dir={self.home / 'conf'}",
        ]
        self.console_log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.console_log, "ab") as log:
            proc = subprocess.Popen(  # fixed argv, no shell
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.home,
                umask=0o077,
            )
        self.state_file.write_text(
            json.dumps(
                {
                    "pid": proc.pid,
                    "bolt_port": self.bolt_port,
                    "http_port": self.http_port,
                    "version": self.version,
                    "started": time.time(),
                }
            )
        )
        if wait:
            try:
                self.wait_ready(self.settings.tuning.neo4j.start_timeout_s)
            except Neo4jServerError:
                self.stop()
                raise
        return self.status()

    def wait_ready(self, timeout_s: float) -> None:
        """Block until Bolt accepts an authenticated session, or raise pointing at the log."""
        from neo4j import GraphDatabase
        from neo4j.exceptions import AuthError, ServiceUnavailable

        state = self._read_state() or {}
        pid = int(state.get("pid", 0))
        deadline = time.monotonic() + timeout_s
        last_error = "no answer"
        while time.monotonic() < deadline:
            if pid and not _pid_alive(pid):
                raise Neo4jServerError(
                    f"Neo4j exited during start-up; see {self.log_file} and {self.console_log}",
                    hint=self._log_tail(),
                )
            if _port_open(self.bolt_port):
                try:
                    with GraphDatabase.driver(self.bolt_uri(), auth=(USER, self.password())) as drv:
                        drv.verify_connectivity()
                        drv.execute_query("RETURN 1", database_="neo4j")
                    return
                except AuthError as exc:
                    raise Neo4jServerError(
                        f"Neo4j rejected the stored password in {self.password_file}: {exc}",
                        hint="the data directory was initialised with another password; "
                        "remove it or set NEO4J_PASSWORD",
                    ) from exc
                except (ServiceUnavailable, OSError, Exception) as exc:  # noqa: BLE001
                    last_error = str(exc)
            time.sleep(0.5)
        raise Neo4jServerError(
            f"Neo4j did not accept Bolt connections within {timeout_s:.0f}s ({last_error}); "
            f"see {self.log_file}",
            hint=self._log_tail(),
        )

    def _log_tail(self, lines: int = 15) -> str:
        for path in (self.log_file, self.console_log):
            if path.exists():
                return "last log lines:\n" + "\n".join(
                    path.read_text(errors="replace").splitlines()[-lines:]
                )
        return "no log written yet"

    # ----------------------------------------------------------------- stop
    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop the server gracefully (SIGTERM, then SIGKILL after ``timeout_s``)."""
        state = self._read_state()
        if not state:
            return False
        pid = int(state["pid"])
        stopped = False
        if _pid_alive(pid):
            try:
                os.killpg(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout_s
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _pid_alive(pid):
                os.killpg(pid, signal.SIGKILL)
            stopped = True
        try:  # reap if we are the parent (tests start it in-process)
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        self.state_file.unlink(missing_ok=True)
        if self.ephemeral:
            shutil.rmtree(self.home, ignore_errors=True)
        return stopped

    def logs(self, lines: int = 50) -> str:
        if not self.log_file.exists():
            return f"(no log yet at {self.log_file})"
        return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
