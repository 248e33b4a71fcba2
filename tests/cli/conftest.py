from ._cli import _no_silvia_environment, loopback  # noqa: F401  (the fixtures, for every test)
