"""The `personasim` command line; its entry point is `personasim.simulation.cli.main:main`."""
