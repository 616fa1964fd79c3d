"""Demo generator."""
