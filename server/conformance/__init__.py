"""The conformance kit for bots (`spades-server conformance -- COMMAND...`).

It starts a server in this process (127.0.0.1, port 0, a temporary database), puts a proxy between
the bot program and the server (`proxy`), which sees every frame both ways and can hold, drop, cut
or add to them, seats the kit's own players beside the bot (`seats`), and runs scripted scenarios
(`scenarios`), checking the bot's traffic against docs/protocol.md (`rules`). `kit` runs them and
reports. The server itself has no hooks for it: everything the kit does to a bot, a network or a
server could do too.
"""
