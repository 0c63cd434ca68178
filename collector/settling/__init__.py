"""Settling: a trace whose spans stopped arriving is assembled (the query, the answer, the
derived context stage, search stages, content events) and written once, by the settle loop."""
