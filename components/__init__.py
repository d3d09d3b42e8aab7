"""motor-kvpool's library: the typed service settings and the Pulumi components built from them."""
