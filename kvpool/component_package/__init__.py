"""The component package: motor-kvpool for Pulumi programs in other languages, through the Python SDK's component
provider host (service.py: kvpool:index:Service; host.py: the provider; `kvpool component-package DIR` writes the
plugin folder that runs it)."""
