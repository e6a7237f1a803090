"""OpenEnv's stateful HTTP protocol (``POST /reset``, ``POST /step``, ``GET /state``).

``wire`` writes requests and parses replies (HTTP/1.1, no I/O); ``engine`` holds the
protocol (routes, keep-alive, deadlines, continuity) as generators of I/O actions, which
``sync`` (``HttpTransport``, one blocking socket) and ``aio`` (``AsyncHttpTransport`` over
``aio_connection``) perform.
"""
