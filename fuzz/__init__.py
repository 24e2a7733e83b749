"""Fuzz targets for the parsers and the fix engine (see README.md)."""
