"""Test certificates: a self-signed certificate for 127.0.0.1 made with the `openssl` command
(trustme is not installed). The certificate is its own CA, so clients trust it with `--ca cert`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def make_certificate(directory: Path, name: str = "server") -> tuple[Path, Path]:
    """(certificate, key) PEM files for 127.0.0.1 under `directory`; skips without openssl."""
    if shutil.which("openssl") is None:  # pragma: no cover - openssl is on the CI image
        pytest.skip("the openssl command is needed to make test certificates")
    cert, key = directory / f"{name}-cert.pem", directory / f"{name}-key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key
