"""Many env sessions over a few servers, stepped together, failures kept to their slot.

``aio`` (``AsyncEnvPool``) is the pool; ``sync`` (``EnvPool``) runs it on an event loop in a
background thread, so the two cannot drift apart. Beneath them: ``slots`` (the per-slot
results and errors, the slot and server records), ``servers`` (the provider factory,
starting and probing one server) and ``clients`` (the slots' client class, closing one).
Above them, ``tools`` sends a tool env's typed calls in every slot through the pool's
``step``. Built on ``client`` and ``providers``.
"""
