"""The client base classes generated clients subclass, and the ways to start them.

``base`` (``ClientCore``) is everything but I/O: arguments, headers, retry decisions
(``retry``), reply parsing and the episode id; ``sync`` (``EnvClient``) and ``aio``
(``AsyncEnvClient``) only send, wait and sleep. ``launchers`` writes
``from_local_process``/``from_docker_image``/``from_hub`` once for both flavours.
"""
