"""In-tree plugins, one package per plugin (registered in asched.plugins.registry)."""
