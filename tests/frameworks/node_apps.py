"""TypeScript framework apps (``node/*.mjs``): Node.js with the packages pinned in
``node/package-lock.json`` (``npm ci``, again only when the lock file changed), and ``run_node``, which
runs one app against a server and the local chat server, as ``conftest.run_app`` runs a Python app."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import Run, finished

NODE_DIR = Path(__file__).resolve().parent / "node"
_STAMP = "ragfault-lock.sha256"


@pytest.fixture(scope="module")
def node() -> str:
    """Node.js with the pinned packages installed."""
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "the TypeScript framework tests need Node.js and npm (Debian packages nodejs, npm)"
    digest = hashlib.sha256((NODE_DIR / "package-lock.json").read_bytes()).hexdigest()
    stamp = NODE_DIR / "node_modules" / _STAMP
    if not (stamp.is_file() and stamp.read_text().strip() == digest):
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
        stamp.write_text(digest)
    return node


def run_node(
    server: Server, chat: ChatServer, node: str, app: str, mode: str, env: dict[str, str] | None = None
) -> Run:
    """Run ``node/<app>.mjs`` in ``mode`` (the scenario given as JSON in the environment, with
    ``env`` added); wait until its traces are evaluated."""
    skip = ("OTEL_", "OPENAI_", "OPENINFERENCE_", "LANGCHAIN_", "LANGSMITH_")
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    full_env.update(
        RAGFAULT_TEST_OTLP=f"{server.url}/v1/traces",
        RAGFAULT_TEST_CHAT_URL=chat.url,
        RAGFAULT_TEST_SCENARIO=json.dumps(
            {
                "KB": scenario.KB,
                "QUESTIONS": scenario.QUESTIONS,
                "TOP_K": scenario.TOP_K,
                "BUDGET": scenario.BUDGET,
            }
        ),
        NO_PROXY="127.0.0.1,localhost",
    )
    full_env.update(env or {})
    done = subprocess.run(
        [node, f"{app}.mjs", mode], cwd=NODE_DIR, capture_output=True, text=True, timeout=300, env=full_env
    )
    return finished(server, done, f"{app} {mode}")
