"""``envgen new``: an env folder and a server module that generate and serve with no edits.

``env`` writes ``schemas/<env>/`` (through ``schema.env_folder``) and the server module that
``server_module`` renders: a small working env on the generated server models.
"""
