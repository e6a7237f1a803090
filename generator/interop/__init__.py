"""Schemas from elsewhere: ``envgen pull`` (a running OpenEnv server) and ``envgen import``
(pydantic model classes), added to the project by ``adopt``.

``openenv`` holds what both readers share (OpenEnv's envelope fields, checks); ``pull`` and
``importer`` turn what they read into env files; ``adopt`` writes the env folder and
generates it, classifying a replacement's changes as ``envgen diff`` would.
"""
