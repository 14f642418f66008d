"""The rules of Spades (every variant in the rules sources) and Hearts: pure, stdlib only."""
