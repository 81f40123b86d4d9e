"""Energy-based associative memory in JAX: from dense Hopfield networks to the Energy Transformer."""

from importlib.metadata import PackageNotFoundError as _NotFound, version as _version

try: __version__ = _version("energy_transformer")  # the version lives in settings.ini only
except _NotFound: __version__ = "0.0.0+unknown"
