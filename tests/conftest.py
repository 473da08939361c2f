"""Shared by every test folder: strict option checks."""

import os

# An unknown or invalid option in any test is a mistake in the test: raise, do not warn.
os.environ.setdefault("TOOLTAP_STRICT_CONFIG", "1")
