"""The manifest's provenance: versions and the git state of the calling file's repository."""

import datetime
import inspect
import os
import platform
import subprocess

import jax

from ._version import __version__


def _git(cwd, *args):
    try:
        r = subprocess.run(["git", "-C", cwd, *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _caller_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    for frame in inspect.stack(0)[1:]:
        path = os.path.abspath(frame.filename)
        if not path.startswith(here) and os.path.exists(path):
            return os.path.dirname(path)
    return os.getcwd()


def collect_provenance(source_framework, caller_dir=None):
    """Versions and the caller's git state (the repository holding the calling file)."""
    import jaxlib

    caller_dir = caller_dir or _caller_dir()
    prov = {
        "exported_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "exporter": f"reactant_export {__version__}",
        "reactant_export_version": __version__,
        "source_framework": source_framework,
        "jax_version": jax.__version__,
        "jaxlib_version": getattr(jaxlib, "__version__", "unknown"),
        "python_version": platform.python_version(),
    }
    if source_framework.startswith("flax"):
        import flax

        prov["flax_version"] = flax.__version__
    commit = _git(caller_dir, "rev-parse", "HEAD")
    if commit:
        prov["git_commit"] = commit
        status = _git(caller_dir, "status", "--porcelain", "--untracked-files=no")
        prov["git_dirty"] = bool(status)
        branch = _git(caller_dir, "rev-parse", "--abbrev-ref", "HEAD")
        if branch:
            prov["git_branch"] = branch
    else:
        prov["git_commit"] = prov["git_branch"] = prov["git_dirty"] = "unknown"
    return prov
