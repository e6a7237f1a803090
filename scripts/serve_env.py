"""Entry point of the example env images: serve one env, configured by environment variables.

The images built by ``scripts/build_images.py`` have no shell, so the protocol cannot be
spliced into an exec-form ``CMD``; this script reads it instead. The variables:

    ENVGEN_SERVER_MODULE  the server module, e.g. ``examples.echo_env.server`` (required)
    ENVGEN_PROTOCOL       ``websocket`` (openenv 0.10, default) or ``http`` (openenv-core 0.1)
    ENVGEN_HOST           address to bind inside the container (default ``0.0.0.0``)
    ENVGEN_PORT           port to listen on inside the container (default ``8000``)

Standard library only: it runs before anything else is importable.
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    """Run the server module as ``python -m MODULE --host H --port P --protocol X``."""
    module = os.environ.get("ENVGEN_SERVER_MODULE", "")
    if not module:
        sys.exit("serve_env.py: set ENVGEN_SERVER_MODULE, e.g. examples.echo_env.server")
    sys.argv = [
        module,
        "--host",
        os.environ.get("ENVGEN_HOST", "0.0.0.0"),
        "--port",
        os.environ.get("ENVGEN_PORT", "8000"),
        "--protocol",
        os.environ.get("ENVGEN_PROTOCOL", "websocket"),
        *sys.argv[1:],
    ]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
