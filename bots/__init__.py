"""The bot SDK, the sample bots and the local arena (`spades-bot`)."""
