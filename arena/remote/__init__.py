"""Remote agents: one JSON protocol (`protocol`), the push transport (`push`: agent type `http`), people as players (`human`)."""
