"""The package version: defined here only (pyproject.toml reads it for the metadata)."""

__version__ = "0.1.0"
