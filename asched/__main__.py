"""``python -m asched`` runs the ``asched`` command."""

import sys

from asched.cli import main

sys.exit(main())
