"""Shared by every test folder: the repository root on the path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
