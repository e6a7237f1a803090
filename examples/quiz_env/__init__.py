"""quiz_env: a short seeded quiz whose models mix optional, nullable and defaulted fields."""
