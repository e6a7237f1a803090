"""Entry point of every image `envgen image` builds: serve the env by its env.toml command.

The image has no shell, so its exec-form CMD is ``python /app/.envgen/serve.py ARGV...``
with env.toml's ``[server] command`` as ARGV, placeholders and all. This fills them in from
the container's environment and replaces itself with the server:

    {python}     this interpreter
    {host}       ENVGEN_HOST (default 0.0.0.0: reachable through the published port)
    {port}       ENVGEN_PORT (default: env.toml's [docker] port, set in the image)
    {transport}  ENVGEN_PROTOCOL (default: env.toml's transport, set in the image)

Standard library only: it runs before anything else is importable. Copied into each image;
never imported by envgen itself.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    template = sys.argv[1:]
    if not template:
        sys.exit("serve.py: no server command given (the image's CMD is broken)")
    values = {
        "python": sys.executable,
        "host": os.environ.get("ENVGEN_HOST", "0.0.0.0"),
        "port": os.environ.get("ENVGEN_PORT", "8000"),
        "transport": os.environ.get("ENVGEN_PROTOCOL", "websocket"),
    }
    argv = [arg.format(**values) for arg in template]
    os.execvp(argv[0], argv)  # a path is used as is; a bare name is looked up on PATH


if __name__ == "__main__":
    main()
