"""Issue 41 item 2, the client's side: a registered player comes back to her own private table with
`spades join TABLE`; its creator sees its code again (`spades tables`, `/code`); a code is typed in
either case; a guest picks its name, and is told plainly why its seat cannot come back."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from server.app import Server
from tests.client.test_cli import one_line_error, spades


async def private_table(server: Server, *, sit: bool) -> tuple[str, str]:
    await spades("connect", f"127.0.0.1:{server.port}")
    registered = await spades("register", "ada")
    assert registered.exit_code == 0, registered.output
    args = ["create", "--bots", "3", "--private"] + ([] if sit else ["--no-sit", "--bots", "2"])
    if sit:
        opened = await spades(*args, input="/quit\n")
        assert opened.exit_code == 0, opened.output
        found = re.search(r"table (\w+) .*\n?.*", opened.output)
        table = re.search(r"Left table (\w+)", opened.output)
        assert found and table, opened.output
        code = re.search(r"--code (\w+)", opened.output)
        assert code, opened.output
        return table.group(1), code.group(1)
    opened = await spades(*args)
    assert opened.exit_code == 0, opened.output
    found = re.search(r"opened table (\w+) \(join code (\w+)\)", opened.output)
    assert found, opened.output
    return found.group(1), found.group(2)


async def test_the_creator_sees_the_code_again(server: Server) -> None:
    table, code = await private_table(server, sit=False)
    listed = await spades("tables")
    assert "(private, code" in listed.output and code in listed.output, listed.output
    rows = json.loads((await spades("tables", "--json")).output)
    assert [r.get("code") for r in rows if r["table"] == table] == [code]
    # On the play screen, `/code` says it again (joined in lower case, with a space).
    typed = f"{code[:4].lower()} {code[4:].lower()}"
    shown = await spades("join", table, "--code", typed, input="/code\n/quit\n")
    assert shown.exit_code == 0, shown.output
    assert f"join code of table {table}: {code}" in shown.output, shown.output


async def test_the_holder_of_a_seat_comes_back_without_the_code(
    server: Server, client_dirs: Path
) -> None:
    table, _ = await private_table(server, sit=True)
    # Her client died with the code on its screen, and nothing of it was kept on this machine.
    shutil.rmtree(client_dirs / "config" / "codes")
    back = await spades("join", table, input="/quit\n")
    assert back.exit_code == 0, back.output
    assert "private" not in back.output and f"table {table}" in back.output, back.output
    assert "Left table" in back.output


async def test_a_guest_chooses_its_name_and_hears_why_its_seat_is_gone(server: Server) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    opened = await spades("create", "--bots", "2", "--name", "zed", input="/quit\n")
    assert opened.exit_code == 0, opened.output
    table = re.search(r"Left table (\w+)", opened.output)
    assert table, opened.output
    # Seat 3 is free: a second guest takes it and the game starts; then the first comes back.
    second = await spades("join", table.group(1), "--name", "amy", input="/quit\n")
    assert second.exit_code == 0, second.output
    assert re.search(r"West \(zed~\w+\)", second.output), second.output  # zed, by its name
    again = one_line_error(await spades("join", table.group(1)))
    assert "the game has started" in again and "as a guest" in again, again
    assert "spades register NAME" in again
