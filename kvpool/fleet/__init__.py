"""The fleet: every stack of the project, which services own a KV pool and which read one, and the problems between
them (model); its offline source, the stack files and their previews (offline); a table and JSON (report) and a
picture (graph).
"""
