"""tooltap's benchmark (issue 6): ``python -m benchmarks`` from the repository root."""
