"""A stand-in `swerex` package: only `python3 -m swerex.server` (see server.py)."""
