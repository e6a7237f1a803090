"""coding_env: runs Python snippets in a subprocess and reports what happened."""
