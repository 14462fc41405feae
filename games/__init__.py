"""Built-in games; each module is a plugin declared in the `arena` entry-point group."""
