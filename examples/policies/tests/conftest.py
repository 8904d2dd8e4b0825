"""The policies' tests need asched and asched-policies installed, nothing else: builders,
the fake handle and the framework runner come from the SDK (asched.testing), so these
tests run from the built wheels outside asched's checkout (asched's
tests/integration/test_sdk_wheel.py does exactly that).

This directory has no __init__.py on purpose: with one, pytest run from asched's repo
root would import it as a package named `tests` and shadow asched's own `tests`."""
