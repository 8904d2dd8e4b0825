"""ImageLocality: favour nodes that already have the pod's images."""

from asched.plugins.imagelocality.image_locality import NAME, SPEC, ImageLocality

__all__ = ["NAME", "SPEC", "ImageLocality"]
