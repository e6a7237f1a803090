"""calc_env: a calculator tool environment on openenv 0.10's MCP environment base."""
