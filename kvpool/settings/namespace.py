"""The settings' configuration namespace: a stack's `motor-kvpool:*` keys, whatever its project is called (as a
provider's settings live under its own name). Its own module, without the models, so that the CLI's config reading
knows it without loading them."""

PROJECT = "motor-kvpool"
