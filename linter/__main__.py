"""``python -m recovery_lint``."""

import os
import signal
import sys


def _quiet_exit(signum: int, frame: object) -> None:
    os._exit(128 + signum)  # interrupted while starting: nothing to clean up yet, no traceback


# until main() installs the run's own handlers
for _signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_signum, _quiet_exit)

# `python -m recovery_lint` puts the working directory first on sys.path: inside a linted
# repository, its own yaml.py or json.py would then be imported (and run) in place of the library
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .console import main  # noqa: E402 - after the start-up signal handlers and the sys.path fix

sys.exit(main())
