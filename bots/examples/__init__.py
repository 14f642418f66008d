"""Example bots kept as files so the documentation's examples are tested (docs/bots.md)."""
