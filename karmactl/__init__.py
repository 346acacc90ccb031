"""karmactl: Karmada-style multi-cluster propagation from a state directory."""
__version__ = "0.1.0"
