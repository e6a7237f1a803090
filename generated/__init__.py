"""Generated environment clients: one package per environment, made by envgen."""
