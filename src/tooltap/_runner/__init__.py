"""The harness half of the loop: run normalized tool calls safely and send each result home."""
