"""`python -m generator` runs the envgen command line."""

from generator.cli import run

run()
