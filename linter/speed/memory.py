"""The cyclic garbage collector, paused while a run builds its models.

A run's models (tens of thousands of nodes, spans and records) hold almost no reference cycles, yet
the collector rescans every one of them at each of its passes, which makes a large run superlinear:
it waits until the run is over."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
