"""The human's terminal client (`spades`)."""
