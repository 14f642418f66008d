"""Several servers on one PostgreSQL database as one server (issue #21): membership and leases
(`membership`), the link between servers (`link`), the forwarded tables and connections
(`remote`), this server's part (`node`), and `serve --workers N` (`workers`)."""
