"""The conformance kit: checks a table server against docs/protocol.md (`spades-bot conformance`).

`bots.conformance.wire` is a client that keeps every message and never trusts the server;
`bots.conformance.claims` holds the document's ordering and precedence claims as data (the tests
check they are the document's own words); `bots.conformance.server_checks` and its siblings are
the scenarios; `bots.conformance.report` prints their table. The kit for bots, which runs a bot
program against a local server, is `server.conformance` (`spades-server conformance`).
"""
