"""Not written yet: this plugin registers nothing."""
