"""Server lifecycles: start an env server, wait until it is healthy, always stop it.

``base`` is what every provider shares (the ``Provider`` interface, argument checks, the
health wait and its errors); ``local`` runs a subprocess, ``docker`` a container (the only
user of the docker SDK), ``ray`` an actor on a cluster's node. ``exit_stop`` stops what is
still running at interpreter exit; ``orphan_guard`` ends a server whose owner died.
Imports ``core`` and ``transport`` (for error mapping), never the clients.
"""
