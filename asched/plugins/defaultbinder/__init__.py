"""DefaultBinder, the default Bind plugin."""

from asched.plugins.defaultbinder.default_binder import NAME, SPEC, DefaultBinder

__all__ = ["NAME", "SPEC", "DefaultBinder"]
