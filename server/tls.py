"""TLS for the listener: the server's certificate and key, loaded once at start.

`server_context(cert, key)` gives the `ssl.SSLContext` every accepted stream is wrapped with
(`trio.SSLStream`, server side). A file that is missing, unreadable, or not a certificate and its
key raises `TLSConfigError` with one sentence; nothing is listening then.
"""

from __future__ import annotations

import ssl
from pathlib import Path


class TLSConfigError(Exception):
    """The certificate or key cannot be used; `str()` says which and why."""


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server-side context (TLS 1.2 or later) holding `cert` (PEM, may include the chain) and its
    private `key` (PEM, unencrypted). Raises `TLSConfigError`."""
    for what, path in (("certificate", cert), ("key", key)):
        if not path.is_file():
            raise TLSConfigError(f"TLS {what} {path} is not a readable file")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certfile=str(cert), keyfile=str(key), password=_no_password)
    except ssl.SSLError as exc:
        reason = exc.reason or exc.strerror or str(exc)
        raise TLSConfigError(
            f"cannot use TLS certificate {cert} with key {key}: {reason}"
        ) from None
    except OSError as exc:
        raise TLSConfigError(
            f"cannot read TLS certificate {cert} or key {key}: {exc.strerror or exc}"
        ) from None
    return context


def link_client_context(cert: Path) -> ssl.SSLContext:
    """The context a cluster server dials another's link with: TLS 1.2 or later, the other's
    chain checked against `cert` (the servers of a cluster share one certificate, or `cert`
    holds their CA). No name is checked: servers dial each other by address, and each proves
    who it is on the link itself (`server.cluster.link_protocol`). Raises `TLSConfigError`."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    try:
        context.load_verify_locations(cafile=str(cert))
    except (ssl.SSLError, OSError) as exc:
        raise TLSConfigError(
            f"cannot use TLS certificate {cert} to check other servers: {exc}"
        ) from None
    return context


def _no_password() -> str:
    # An encrypted key would otherwise prompt on the terminal; refuse it instead.
    raise TLSConfigError("the TLS key is encrypted; give an unencrypted PEM key")
