import os
import sys

# `python -m recovery_lint` puts the working directory first on sys.path: inside a linted
# repository, its own yaml.py or json.py would then be imported (and run) in place of the library
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli import main

sys.exit(main())
