#!/usr/bin/env python3
"""lock.py: writes and reads the release lock (deploy/lock/release.lock.json).

  lock.py refresh --out LOCK --commit SHA --version V --epoch N --wheels-in FILE
                  --wheel-dir DIR --closure VARIANT=FILE...
      Writes LOCK: the source commit and epoch; every Debian package that owns a file of a
      variant's library closure (FILE: host paths, one a line, from elf_closure.py --root /),
      at the version installed here, with its .deb's file name, size and SHA-256 from apt
      and the SHA-256 and Date of each suite's InRelease; every wheel of FILE (name==version
      lines) found in DIR, with its SHA-256; the build tools' versions.
  lock.py debs LOCK VARIANT      prints "name version filename sha256" per package
  lock.py build-packages LOCK    prints "name version" per package the binary is built with
  lock.py wheels LOCK VARIANT    prints "name version filename sha256" per wheel
  lock.py check LOCK KIND NAME FILE
      KIND deb|wheel: exit 0 when FILE's SHA-256 is the lock's for NAME, else 1 and a
      message naming the input, both digests and the lock.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

FORMAT = "reactant-server release lock 1"
SUITE_LISTS = "/var/lib/apt/lists"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sh(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def owning_package(path):
    """The Debian package that ships `path` (trying both sides of the /usr merge)."""
    candidates = [path]
    if path.startswith("/usr/lib"):
        candidates.append(path[len("/usr"):])
    elif path.startswith("/lib"):
        candidates.append("/usr" + path)
    for p in candidates:
        r = subprocess.run(["dpkg-query", "-S", p], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split(":")[0].strip()
    return None


# The packages whose headers and tools make the binary: the lock records their versions and
# the build refuses another version (they are on the build machine, not in the image).
BUILD_PACKAGES = ["g++-12", "libstdc++-12-dev", "libc6-dev", "cmake", "ninja-build",
                  "protobuf-compiler", "protobuf-compiler-grpc", "libgrpc++-dev", "libprotobuf-dev",
                  "libyaml-cpp-dev", "nlohmann-json3-dev", "libspdlog-dev", "libfmt-dev",
                  "libcli11-dev", "libeigen3-dev", "libcpp-httplib-dev", "libssl-dev",
                  "libarchive-dev", "libboost1.74-dev", "zlib1g-dev", "prometheus-cpp-dev", "binutils"]


def deb_entry(name):
    """The package as the suites offer it now (apt's candidate version)."""
    policy = sh("apt-cache", "policy", name)
    m = re.search(r"Candidate: (\S+)", policy)
    if not m or m.group(1) == "(none)":
        sys.exit(f"lock: apt offers no version of {name} (run apt-get update)")
    version = m.group(1)
    arch = sh("dpkg-query", "-W", "-f=${Architecture}", name)
    out = subprocess.run(["apt-get", "download", "--print-uris", f"{name}={version}"],
                         capture_output=True, text=True)
    m = re.search(r"'\S+' (\S+) (\d+) SHA256:([0-9a-f]{64})", out.stdout)
    if out.returncode != 0 or not m:
        sys.exit(f"lock: apt cannot download {name} {version} "
                 f"({out.stderr.strip() or 'no URI'}): run apt-get update")
    return {"name": name, "version": version, "architecture": arch, "filename": m.group(1),
            "size": int(m.group(2)), "sha256": m.group(3),
            "purl": f"pkg:deb/debian/{name}@{version}?arch={arch}"}


def suites():
    out = []
    for path in sorted(glob.glob(os.path.join(SUITE_LISTS, "*_InRelease"))):
        with open(path, errors="replace") as f:
            text = f.read()
        fields = dict(re.findall(r"^(Origin|Codename|Suite|Date): (.*)$", text, re.M))
        if fields.get("Origin") not in ("Debian",):
            continue
        out.append({"codename": fields.get("Codename", ""), "date": fields.get("Date", ""),
                    "component": "security" if "security" in path else "main",
                    "inrelease_sha256": sha256_file(path)})
    return sorted(out, key=lambda s: (s["codename"], s["component"]))


def tool_versions():
    first = lambda *cmd: sh(*cmd).splitlines()[0].strip()
    return {
        "g++": first("g++", "--version"),
        "cmake": first("cmake", "--version"),
        "ninja": first("ninja", "--version"),
        "binutils": first("readelf", "--version"),
        "python3": first(sys.executable, "--version"),
        "zlib": subprocess.run([sys.executable, "-c", "import zlib;print(zlib.ZLIB_RUNTIME_VERSION)"],
                               capture_output=True, text=True).stdout.strip(),
        "openssl": first("openssl", "version"),
        "dpkg": first("dpkg-deb", "--version"),
    }


def refresh(a):
    variants = {}
    for spec in a.closure:
        variant, path = spec.split("=", 1)
        with open(path) as f:
            variants[variant] = [l.strip() for l in f if l.strip()]
    owners = {}
    for variant, paths in variants.items():
        for p in paths:
            if os.path.isdir(p):  # a merged-/usr link such as /lib64: not a library
                continue
            pkg = owning_package(p)
            if pkg is None:
                sys.exit(f"lock: {p} (a library of the {variant} image) belongs to no Debian "
                         f"package")
            owners.setdefault(pkg, set()).add(variant)
    packages = []
    for name in sorted(owners):
        e = deb_entry(name)
        e["variants"] = sorted(owners[name])
        packages.append(e)
    wheels = []
    with open(a.wheels_in) as f:
        reqs = [l.split("#")[0].strip() for l in f]
    for req in filter(None, reqs):
        name, version = req.split("==")
        stem = name.replace("-", "_")
        found = sorted(glob.glob(os.path.join(a.wheel_dir, f"{stem}-{version}-*.whl")))
        if len(found) != 1:
            sys.exit(f"lock: {a.wheel_dir} has {len(found)} wheels for {req}, expected one")
        wheels.append({"name": name, "version": version, "filename": os.path.basename(found[0]),
                       "size": os.path.getsize(found[0]), "sha256": sha256_file(found[0]),
                       "purl": f"pkg:pypi/{name}@{version}", "variants": ["gpu"]})
    lock = {"format": FORMAT, "version": a.version,
            "source": {"commit": a.commit, "source_date_epoch": int(a.epoch)},
            "debian": {"architecture": "amd64", "suites": suites(), "packages": packages},
            "wheels": wheels, "tools": tool_versions(),
            "build_packages": {n: sh("dpkg-query", "-W", "-f=${Version}", n)
                               for n in BUILD_PACKAGES}}
    with open(a.out, "w") as f:
        json.dump(lock, f, indent=1, sort_keys=True)
        f.write("\n")


def load(path):
    with open(path) as f:
        lock = json.load(f)
    if lock.get("format") != FORMAT:
        sys.exit(f"lock: {path}: format is {lock.get('format')!r}, expected {FORMAT!r}")
    return lock


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("refresh")
    for opt in ("--out", "--commit", "--version", "--epoch", "--wheels-in", "--wheel-dir"):
        r.add_argument(opt, required=True)
    r.add_argument("--closure", action="append", default=[])
    for name in ("debs", "wheels"):
        s = sub.add_parser(name)
        s.add_argument("lock")
        s.add_argument("variant")
    bp = sub.add_parser("build-packages")
    bp.add_argument("lock")
    c = sub.add_parser("check")
    for name in ("lock", "kind", "name", "file"):
        c.add_argument(name)
    a = ap.parse_args()
    if a.cmd == "refresh":
        return refresh(a)
    if a.cmd == "build-packages":
        for name, version in sorted(load(a.lock)["build_packages"].items()):
            print(name, version)
        return 0
    if a.cmd in ("debs", "wheels"):
        items = load(a.lock)["debian"]["packages"] if a.cmd == "debs" else load(a.lock)["wheels"]
        for e in items:
            if a.variant in e["variants"]:
                print(e["name"], e["version"], e["filename"], e["sha256"])
        return 0
    items = load(a.lock)["debian"]["packages"] if a.kind == "deb" else load(a.lock)["wheels"]
    entry = next((e for e in items if e["name"] == a.name), None)
    if entry is None:
        print(f"image: {a.kind} {a.name} is not in {a.lock}", file=sys.stderr)
        return 1
    got = sha256_file(a.file)
    if got != entry["sha256"]:
        print(f"image: refusing {a.kind} {a.name} {entry['version']} ({os.path.basename(a.file)})"
              f": its sha256 is {got}, {a.lock} pins {entry['sha256']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
