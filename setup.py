"""Build settings pyproject.toml cannot hold: the optional C speedup of the stream hot path.

``optional=True``: without a C compiler the build goes on and tooltap uses the pure
Python version of the same function (``tooltap._core._json.match_string``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tooltap._core._speedups", ["src/tooltap/_core/_speedups.c"], optional=True
        )
    ]
)
