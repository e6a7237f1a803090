"""`python -m generator` runs the envgen command line."""

from generator.entry import run

run()
