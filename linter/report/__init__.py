"""Output formats. Each turns diagnostics (and the registry's docs) into one document."""

from __future__ import annotations

FORMATS = ("full", "concise", "json")
