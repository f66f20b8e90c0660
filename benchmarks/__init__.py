"""asv benchmark suites (see engines.py)."""
