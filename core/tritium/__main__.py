"""``python -m tritium``: the ``tritium`` command (see ``tritium.cli``)."""

import sys

from .cli import main

sys.exit(main())
