"""echo_env: echoes each message back; the simplest possible environment."""
