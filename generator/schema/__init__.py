"""Stage 1, the env's inputs: find ``schemas/<env>/``, read it, check it, bundle it.

Takes an env folder (``env.toml`` and the action, observation, state and optional reset
schemas) and hands on an ``EnvInput`` (``loader``): the checked manifest (``manifest``) and
one self-contained bundle of the schemas (``bundle``), every problem reported with its file
and JSON pointer (``check``, ``meta_schema``, ``jsonio``). ``env_folder`` writes such a folder
atomically (for ``new``, ``pull`` and ``import``); ``listing`` says which folders are envs.
"""
