"""The trio table server: listener, sessions, lobby, tables, clocks, ladder, SQLite store."""
