"""The typed settings of one inference service: service.py is the whole (ServiceSettings), one module per section,
loader.py reads them and reports every problem at once, from_stack.py reads them from a stack's configuration."""
