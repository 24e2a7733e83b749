"""The commands: ``check`` (with its fixing and output) and ``rule``; ``cli`` picks one."""
