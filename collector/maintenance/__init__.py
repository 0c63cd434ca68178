"""Maintenance: retention of the file store and of the lake (components)."""
