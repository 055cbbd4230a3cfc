"""The project's tests: a package, so shared helpers import as `tests.helpers.<module>` and fixtures come from
conftest.py files."""
