"""``python -m tritium_conformance``: see ``tritium_conformance.cli``."""

import sys

from .cli import main

sys.exit(main())
