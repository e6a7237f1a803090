"""Moving one operation to an env server and its reply back: the wire protocols.

``base`` defines the ``Transport`` and ``AsyncTransport`` interfaces and the limits every
transport checks. Each protocol (``http``, ``websocket``) is a sans-I/O engine (its rules
and wire format, no sockets) with two thin shells that move bytes: blocking (``sync``) and
asyncio (``aio``). What the shells share sits here: ``aio_protocol`` (asyncio read buffer and
deadline), ``headers`` (checks, bearer token, tracing) and ``errormap`` (built-in I/O errors
to the runtime's). Imports only ``core``.
"""
