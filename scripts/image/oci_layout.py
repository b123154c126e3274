#!/usr/bin/env python3
"""oci_layout.py: writes an OCI image layout (image-spec v1.1) from staged directories,
byte for byte the same for the same inputs.

Usage: oci_layout.py --spec SPEC.json --out DIR

SPEC.json:
  {"epoch": SOURCE_DATE_EPOCH,
   "ref_name": "0.1.0-cpu",                  # index.json's org.opencontainers.image.ref.name
   "layers": [{"dir": "stage/libs", "created_by": "text for the history",
               "owners": {"var/cache/reactant-server": [65532, 65532]}}],
   "config": {...},                          # the image config's `config` object
   "annotations": {...}}                     # the manifest's annotations (also the labels)

Every layer is a tar of its directory with entries sorted by name, mtime = epoch, owner
0:0 unless `owners` names the path or a folder above it, no user or group names, modes
normalised (directories 0755, files 0755 when executable else 0644, /tmp 1777), gzip
without a name and with mtime 0. The config and the manifest are JSON with sorted keys and
no spaces; DIR is replaced. Prints the manifest digest ("sha256:<hex>").
"""
import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import sys
import tarfile

MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
MT_INDEX = "application/vnd.oci.image.index.v1+json"


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class Blobs:
    def __init__(self, out):
        self.dir = os.path.join(out, "blobs", "sha256")
        os.makedirs(self.dir)

    def put(self, data, media_type):
        hexd = hashlib.sha256(data).hexdigest()
        with open(os.path.join(self.dir, hexd), "wb") as f:
            f.write(data)
        return {"mediaType": media_type, "digest": "sha256:" + hexd, "size": len(data)}


def owner_of(rel, owners):
    best, who = -1, (0, 0)
    for prefix, ids in owners.items():
        p = prefix.strip("/")
        if (rel == p or rel.startswith(p + "/")) and len(p) > best:
            best, who = len(p), tuple(ids)
    return who


def entries(top):
    """Every path under `top`, relative, sorted by its bytes (parents before children)."""
    paths = []
    for cur, dirs, files in os.walk(top):
        rel = os.path.relpath(cur, top)
        for name in dirs + files:
            paths.append(os.path.normpath(os.path.join(rel, name)))
    return sorted(paths, key=lambda p: p.encode())


def write_layer(layer, epoch, tmp_dir, blobs):
    """Writes one layer blob; returns (descriptor, diff_id)."""
    top = layer["dir"]
    owners = layer.get("owners", {})
    tar_path = os.path.join(tmp_dir, "layer.tar")
    with open(tar_path, "wb") as raw:
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
            for rel in entries(top):
                host = os.path.join(top, rel)
                st = os.lstat(host)
                ti = tarfile.TarInfo(rel)
                ti.mtime = epoch
                ti.uid, ti.gid = owner_of(rel, owners)
                ti.uname = ti.gname = ""
                if stat.S_ISLNK(st.st_mode):
                    ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, os.readlink(host), 0o777
                    tar.addfile(ti)
                elif stat.S_ISDIR(st.st_mode):
                    ti.type, ti.mode = tarfile.DIRTYPE, 0o1777 if rel == "tmp" else 0o755
                    tar.addfile(ti)
                elif stat.S_ISREG(st.st_mode):
                    ti.mode = 0o755 if st.st_mode & 0o111 else 0o644
                    ti.size = st.st_size
                    with open(host, "rb") as f:
                        tar.addfile(ti, f)
                else:
                    sys.exit(f"oci_layout: {host}: only files, folders and symbolic links "
                             f"go into a layer")
    diff = hashlib.sha256()
    blob_tmp = os.path.join(tmp_dir, "layer.tar.gz")
    with open(tar_path, "rb") as src, open(blob_tmp, "wb") as dst:
        with gzip.GzipFile(filename="", mode="wb", fileobj=dst, mtime=0, compresslevel=6) as gz:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                diff.update(chunk)
                gz.write(chunk)
    blob = hashlib.sha256()
    size = 0
    with open(blob_tmp, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            blob.update(chunk)
            size += len(chunk)
    hexd = blob.hexdigest()
    os.replace(blob_tmp, os.path.join(blobs.dir, hexd))
    os.remove(tar_path)
    return ({"mediaType": MT_LAYER, "digest": "sha256:" + hexd, "size": size},
            "sha256:" + diff.hexdigest())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.spec) as f:
        spec = json.load(f)
    epoch = int(spec["epoch"])
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    blobs = Blobs(args.out)
    tmp_dir = os.path.join(args.out, ".tmp")
    os.makedirs(tmp_dir)
    layers, diff_ids, history = [], [], []
    for layer in spec["layers"]:
        desc, diff_id = write_layer(layer, epoch, tmp_dir, blobs)
        layers.append(desc)
        diff_ids.append(diff_id)
        history.append({"created": created, "created_by": layer["created_by"]})
    os.rmdir(tmp_dir)
    annotations = dict(spec.get("annotations", {}))
    image_config = dict(spec["config"])
    image_config["Labels"] = annotations
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": image_config,
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": history,
    }
    config_desc = blobs.put(canonical(config), MT_CONFIG)
    manifest = {"schemaVersion": 2, "mediaType": MT_MANIFEST, "config": config_desc,
                "layers": layers, "annotations": annotations}
    manifest_desc = blobs.put(canonical(manifest), MT_MANIFEST)
    manifest_desc["annotations"] = {"org.opencontainers.image.ref.name": spec["ref_name"]}
    index = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": [manifest_desc]}
    with open(os.path.join(args.out, "index.json"), "wb") as f:
        f.write(canonical(index))
    with open(os.path.join(args.out, "oci-layout"), "wb") as f:
        f.write(canonical({"imageLayoutVersion": "1.0.0"}))
    print(manifest_desc["digest"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
