"""Subcommands of ``ragfault``, one module each."""
