"""Hostile-client tests: a real `spades-server` subprocess on 127.0.0.1, spoken to rightly and wrongly."""
