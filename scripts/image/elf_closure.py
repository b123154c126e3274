#!/usr/bin/env python3
"""elf_closure.py: the shared libraries a set of ELF files loads, resolved inside a root.

Usage: elf_closure.py --root STAGE [--host-provided NAME]... [--loaded-dir DIR]... FILE...

FILE paths are relative to STAGE (the extracted Debian packages, the binary and, for the GPU
image, the wheels). Every DT_NEEDED name is looked up the way ld.so does it for an image
without /etc/ld.so.cache: the DT_RPATH of the object and of the objects that loaded it (when
the object has no DT_RUNPATH), its DT_RUNPATH, then Debian's system directories. $ORIGIN is
the directory of the object inside STAGE; absolute symbolic links inside STAGE are resolved
against STAGE, never against the host. The program interpreter (PT_INTERP) is included.

Prints, one per line and sorted, every path under STAGE the files need: the names found
(symbolic links included) and the files they point to. Names given with --host-provided
(the NVIDIA driver's libcuda.so.1, mounted by the container runtime) are not looked up;
a name present in a --loaded-dir folder (under STAGE: the CUDA wheels' lib/ folders, whose
libraries the plugin loads through its DT_RPATH before anything that needs them by name) is
taken as loaded.
Exit status 1, with the names and the files that need them, when a name is found nowhere.
"""
import argparse
import os
import posixpath
import re
import subprocess
import sys

SYSTEM_DIRS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"]


def dynamic_info(path):
    """(interp, needed, rpath, runpath) of the ELF file at `path` (readelf, GNU binutils)."""
    out = subprocess.run(["readelf", "-d", "-l", "-W", path], check=True, capture_output=True,
                         text=True).stdout
    interp = None
    m = re.search(r"\[Requesting program interpreter: ([^\]]+)\]", out)
    if m:
        interp = m.group(1)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    rpath = re.findall(r"\(RPATH\)\s+Library rpath: \[([^\]]*)\]", out)
    runpath = re.findall(r"\(RUNPATH\)\s+Library runpath: \[([^\]]*)\]", out)
    split = lambda v: [d for d in (v[0].split(":") if v else []) if d]
    return interp, needed, split(rpath), split(runpath)


def resolve_links(root, path, chain):
    """Follows symbolic links of `path` (absolute inside root) inside root; records every
    link and the final file in `chain`. Returns the final path or None when missing."""
    for _ in range(40):
        parts = path.strip("/").split("/")
        cur = "/"
        for i, part in enumerate(parts):
            nxt = posixpath.join(cur, part)
            host = root + nxt
            if os.path.islink(host):
                target = os.readlink(host)
                chain.add(nxt)
                base = target if target.startswith("/") else posixpath.join(cur, target)
                rest = parts[i + 1:]
                path = posixpath.normpath(posixpath.join(base, *rest))
                break
            cur = nxt
        else:
            if os.path.isfile(root + cur):
                chain.add(cur)
                return cur
            return None
    return None


def is_elf(host_path):
    with open(host_path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--host-provided", action="append", default=[])
    ap.add_argument("--loaded-dir", action="append", default=[])
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    needed_paths = set()
    missing = {}
    done = set()
    # (path inside root, inherited DT_RPATH directories already expanded)
    todo = [("/" + f.lstrip("/"), []) for f in args.files]
    while todo:
        obj, inherited = todo.pop()
        if obj in done:
            continue
        done.add(obj)
        chain = set()
        real = resolve_links(root, obj, chain)
        if real is None or not is_elf(root + real):
            continue
        interp, needed, rpath, runpath = dynamic_info(root + real)
        origin = posixpath.dirname(obj)
        expand = lambda dirs: [posixpath.normpath(d.replace("$ORIGIN", origin)
                                                  .replace("${ORIGIN}", origin)) for d in dirs]
        own_rpath = expand(rpath)
        search = ([] if runpath else own_rpath + inherited) + expand(runpath) + SYSTEM_DIRS
        if interp:
            c = set()
            if resolve_links(root, interp, c) is None:
                missing.setdefault(interp, []).append(obj)
            needed_paths |= c
        for name in needed:
            if name in args.host_provided or any(
                    os.path.lexists(os.path.join(root, d.lstrip("/"), name)) for d in args.loaded_dir):
                continue
            for d in search:
                c = set()
                found = resolve_links(root, posixpath.join(d, name), c)
                if found is not None:
                    needed_paths |= c
                    todo.append((posixpath.join(d, name), own_rpath + inherited))
                    break
            else:
                missing.setdefault(name, []).append(obj)
    if missing:
        for name, users in sorted(missing.items()):
            print(f"elf_closure: {name} (needed by {', '.join(sorted(set(users)))}) is in no "
                  f"locked package and not host-provided", file=sys.stderr)
        return 1
    for p in sorted(needed_paths):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
