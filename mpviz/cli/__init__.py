"""The pieces of `python -m mpviz` (mpviz/__main__.py puts them together): output.py writes ASCII and says
errors in one line, arguments.py declares the arguments several commands share, and one module per group of
subcommands declares its own arguments and prints its results."""
