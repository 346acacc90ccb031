"""OverridePolicy / ClusterOverridePolicy application (Karmada's override manager).

Pure functions: given a manifest, the target Cluster and the policies, return the overridden
manifest and what was applied (``pkg/util/overridemanager/``).
"""
from .image import ImageComponents, ImageError, override_image, parse_image
from .manager import OverrideError, OverrideResult, apply_overrides
from .overriders import OverriderError, apply_overriders

__all__ = [
    "ImageComponents",
    "ImageError",
    "OverrideError",
    "OverrideResult",
    "OverriderError",
    "apply_overriders",
    "apply_overrides",
    "override_image",
    "parse_image",
]
