"""The one place the version lives: the package, the results files and the release all read it from here."""

__version__ = "0.2.0"
