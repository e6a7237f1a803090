"""reacher_env: a two-link planar arm reaching for a seeded target."""
