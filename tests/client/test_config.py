"""The config dir: the remembered server, and tokens in files only their owner can read."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from client.config import ClientConfig, ConfigError, Credentials, ServerAddress


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("192.168.1.20", "192.168.1.20", 7777),
        ("myhost:8000", "myhost", 8000),
        ("[::1]:9000", "::1", 9000),
        (" example.org ", "example.org", 7777),
    ],
)
def test_addresses(text: str, host: str, port: int) -> None:
    assert ServerAddress.parse(text) == ServerAddress(host, port)


@pytest.mark.parametrize("text", ["", "host:0", "host:99999", "host:x", ":80", "[::1"])
def test_bad_addresses_say_why(text: str) -> None:
    with pytest.raises(ConfigError):
        ServerAddress.parse(text)


def test_tokens_are_private_and_remembered(tmp_path: Path) -> None:
    config = ClientConfig(tmp_path / "conf")
    address = ServerAddress("10.0.0.5", 7777)
    assert config.current_server() is None
    config.set_current_server(address)
    config.save_credentials(address.key, Credentials("ada", "tok-secret"))
    again = ClientConfig(tmp_path / "conf")
    assert again.current_server() == address
    assert again.credentials(address.key) == Credentials("ada", "tok-secret")
    mode = stat.S_IMODE(config.token_path(address.key).stat().st_mode)
    assert mode == 0o600
    config.forget_credentials(address.key)
    assert config.credentials(address.key) is None


def test_env_var_moves_the_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPADES_CONFIG_DIR", str(tmp_path / "elsewhere"))
    assert ClientConfig().root == tmp_path / "elsewhere"


def test_a_corrupt_config_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "conf"
    root.mkdir()
    (root / "client.json").write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read"):
        ClientConfig(root).current_server()
