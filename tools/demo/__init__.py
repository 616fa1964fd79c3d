"""The generator of the bundled demo telemetry: `python -m tools.demo.generate` (see `generate`)."""
