"""Sans-I/O core: no networking, no OpenTelemetry, no wrapt (a test enforces this)."""
