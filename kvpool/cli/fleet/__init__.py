"""The fleet: every stack of the project, which services own a KV pool and which read one, and the problems between
them (model), among them what two stacks of one cluster both ask the cluster for (clashes); its two sources, the stack files and their previews (offline) and the stacks in a Pulumi backend
through the Automation API (backend), compared on the e2e cluster by tests/e2e/test_stack_reference_fleet.py; a
table and JSON (report) and a picture (graph).
"""
