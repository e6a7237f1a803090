"""Tests of the example environment servers in `examples/`."""
