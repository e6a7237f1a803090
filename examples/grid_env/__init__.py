"""grid_env: a small seeded gridworld driven by a tagged union of actions."""
