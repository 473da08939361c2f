"""OpenTelemetry layer: names, instruments, the inference operation and the tool-call lifecycle."""
