"""tooltap's benchmark: ``python -m benchmarks`` from the repository root."""
