"""Launchers: the table of the launchers a training launch goes through, how a command is
recognised as one of them, and how many processes on how many nodes it starts."""
