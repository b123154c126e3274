"""reactant_export: JAX and Flax models as reactant-server bundles (bundle format 2.0).

export_bundle(fn, params, example_inputs, ...) writes the bundle; verify(...) serves it and
compares the server's answers with jax's; see docs/export-jax.md."""

from ._export import ExportError, collect_provenance, export_bundle, main_arity
from ._server import Server, free_port
from ._verify import verify
from ._version import __version__

__all__ = ["ExportError", "Server", "collect_provenance", "export_bundle", "free_port",
           "main_arity", "verify", "__version__"]
