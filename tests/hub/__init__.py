"""Hub tests: a package, so this folder's conftest.py does not shadow tests/conftest.py."""
