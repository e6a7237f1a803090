"""Benchmarks: scripts that print and record figures; they never fail on a slow machine."""
