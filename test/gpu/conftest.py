"""The GPU tests share test/python/_helpers.py with the CPU tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
