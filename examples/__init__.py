"""Example environment servers that envgen's demo and end-to-end tests talk to.

Each package holds framework-free logic (`logic.py`) and a `server.py` that puts it behind
either an openenv 0.10 WebSocket app or an openenv-core 0.1.1 stateful HTTP app, so the same
episode can be driven over both wire protocols.
"""
