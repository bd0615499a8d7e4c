"""The bottom of the kernel: generic parts every other sub-package may use (the one registry
of named extensions); it imports nothing of personasim."""

__all__: list[str] = []
