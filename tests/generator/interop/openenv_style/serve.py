"""Serve one of the OpenEnv-style test envs: `python -m tests.generator.interop.openenv_style.serve
NAME --port N` (an openenv 0.10 app under uvicorn, on 127.0.0.1)."""

from __future__ import annotations

import argparse
import importlib


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    module = importlib.import_module(f"tests.generator.interop.openenv_style.{args.name}")
    import uvicorn

    uvicorn.run(module.build_app(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
