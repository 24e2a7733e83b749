"""The stages of a lint run, each over the plain records of ``request``."""
