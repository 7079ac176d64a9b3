"""``python -m tlx``: the command-line tools (``language/tlx/report/cli.py``)."""

import sys

from .report.cli import main

sys.exit(main())
