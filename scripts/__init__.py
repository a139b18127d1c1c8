"""Helper scripts; ``scripts.app_server`` is imported by the browser tests and the benchmarks."""
