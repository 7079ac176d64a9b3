"""``python -m tlx``: the command-line tools (``language/tlx/_cli.py``)."""

import sys

from ._cli import main

sys.exit(main())
