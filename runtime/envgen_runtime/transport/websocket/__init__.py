"""OpenEnv's ``/ws`` session protocol: one connection is one episode.

``frames`` drives websockets' sans-I/O client (messages, keepalive, redirects); ``engine``
holds the session rules (reply matching, session loss, capacity); ``errors`` maps websockets'
exceptions and the server's error messages; ``sync`` (``WebSocketTransport``, over
``direct``'s blocking socket) and ``aio`` (``AsyncWebSocketTransport``, over
``aio_connection``) only open connections, move bytes and wait. ``redact`` keeps header
values out of websockets' handshake logs.
"""
