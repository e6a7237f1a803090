"""`envgen image`: a Docker image for an env's server, built with no registry.

Three layers, each rebuilt only when its inputs change (`engine.KEY_LABEL`): this host's
CPython as a base (`rootfs`), the server's packages for each set of requirements (`deps`),
and the env's own code with env.toml's `[server] command` as its entry point (`envimage`).
"""

from generator.image.build import build_images, image_envs

__all__ = ["build_images", "image_envs"]
