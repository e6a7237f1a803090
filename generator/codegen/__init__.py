"""Stage 2, code: one ``EnvInput`` becomes the files of ``generated/<env>/``.

``models`` and ``server_models`` make the model modules through datamodel-code-generator in
process (``datamodel``), after rewriting the bundle's defs (``schema_rewrites``) and mending
what Python would misread (``field_names``, ``tuple_defaults``); ``render`` fills the Jinja
templates (with ``reset_params``, ``field_tables``) and ``formatting`` runs the pinned ruff.
``output`` builds the whole tree in memory, writes it atomically or checks it, skipping envs
the ``cache`` proves current; ``parallel`` and ``warm_worker`` spread envs over processes
with a serial run's bytes, the warm worker running an env's ``model_call``s while ``render``
loads the templates (their compiled code kept by ``template_cache``). Hands on file bytes;
reads only ``schema``'s output.
"""
