"""Serving a class from one process: the admission gate and its queue, the worker processes heavy and light runs
go to, the process-wide results cache, and run slots that keep a class's page runs from slowing each other."""
