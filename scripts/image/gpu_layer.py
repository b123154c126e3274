#!/usr/bin/env python3
"""gpu_layer.py: moves the GPU release image to a GPU host that cannot receive it whole, and
proves that what is put together there is the image, byte for byte.

The image's PJRT plugin and CUDA libraries (the gpu layer, gigabytes) are the files of the
locked wheels; a GPU host with those wheels installed already holds them. `split` keeps, from
the OCI layout, every other layer as its blob, the gpu layer's tar headers and its small
files, and the digests; `assemble` rebuilds the gpu layer's tar stream from those headers and
the host's installed files, checks its sha256 against the layer's diff_id in the image
config (so every byte of the layer is the image's), checks the other layers, carried as
uncompressed tars, against their diff_ids too, and unpacks all layers into a root folder.
The diff_ids are the config's, and the config is the one the manifest digest names.

Usage:
  gpu_layer.py split LAYOUT STAGE [--inline-below BYTES]
      LAYOUT: an OCI layout (scripts/image.sh gpu); STAGE: the folder to write (replaced).
      Files of the gpu layer smaller than BYTES (default 262144) travel in STAGE.
  gpu_layer.py assemble STAGE SITE ROOT
      SITE: a site-packages folder with the locked wheels installed (the gpu layer's
      opt/reactant-server/site-packages/X is read from SITE/X); ROOT: the folder to fill
      (replaced). Exit 0 when the manifest, the config and every layer's diff_id match, 1 otherwise, naming
      each file that is missing or differs.
"""
import gzip
import hashlib
import json
import os
import shutil
import sys
import tarfile

SITE_PREFIX = "opt/reactant-server/site-packages/"
BLOCK = 512


def blob_path(layout, digest):
    algo, hexd = digest.split(":", 1)
    return os.path.join(layout, "blobs", algo, hexd)


def read_json(path):
    with open(path, "rb") as f:
        return json.load(f)


def image_parts(layout):
    index = read_json(os.path.join(layout, "index.json"))
    manifest_digest = index["manifests"][0]["digest"]
    manifest = read_json(blob_path(layout, manifest_digest))
    config = read_json(blob_path(layout, manifest["config"]["digest"]))
    return manifest_digest, manifest, config


def gpu_layer_index(layout, manifest):
    """The index of the one layer holding opt/reactant-server/site-packages."""
    found = []
    for i, layer in enumerate(manifest["layers"]):
        with tarfile.open(blob_path(layout, layer["digest"]), "r:gz") as t:
            for m in t:
                if m.name.startswith(SITE_PREFIX):
                    found.append(i)
                    break
    if len(found) != 1:
        sys.exit(f"gpu_layer: expected one layer with {SITE_PREFIX}, found {len(found)}")
    return found[0]


def split(layout, stage, inline_below):
    manifest_digest, manifest, config = image_parts(layout)
    gi = gpu_layer_index(layout, manifest)
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "inline"))
    shutil.copyfile(blob_path(layout, manifest_digest), os.path.join(stage, "manifest.json"))
    shutil.copyfile(blob_path(layout, manifest["config"]["digest"]), os.path.join(stage, "config.json"))
    # The other layers travel uncompressed (the carrier compresses better than gzip); their
    # check is then the uncompressed digest, the config's diff_id.
    for i, layer in enumerate(manifest["layers"]):
        if i != gi:
            with gzip.open(blob_path(layout, layer["digest"]), "rb") as src, \
                    open(os.path.join(stage, f"layer{i}.tar"), "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
    # The gpu layer, uncompressed: each member's header blocks (offset .. offset_data) and
    # where its data comes from; the end-of-archive blocks after the last member.
    raw = os.path.join(stage, "gpu.tar.tmp")
    with gzip.open(blob_path(layout, manifest["layers"][gi]["digest"]), "rb") as src, \
            open(raw, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 22)
    members = []
    with open(raw, "rb") as f, tarfile.open(raw, "r:") as t:
        end = 0
        for m in t:
            f.seek(m.offset)
            header = f.read(m.offset_data - m.offset)
            entry = {"name": m.name, "header": header.hex(), "size": m.size if m.isreg() else 0}
            if m.isreg():
                f.seek(m.offset_data)
                data = f.read(m.size)
                entry["sha256"] = hashlib.sha256(data).hexdigest()
                if m.size < inline_below or not m.name.startswith(SITE_PREFIX):
                    entry["inline"] = f"{len(members)}"
                    with open(os.path.join(stage, "inline", entry["inline"]), "wb") as o:
                        o.write(data)
            members.append(entry)
            end = m.offset_data + ((m.size + BLOCK - 1) // BLOCK) * BLOCK if m.isreg() else m.offset_data
        f.seek(end)
        trailer = f.read()
    os.remove(raw)
    with open(os.path.join(stage, "gpu_layer.json"), "w") as o:
        json.dump({"manifest_digest": manifest_digest, "gpu_layer": gi,
                   "layers": [l["digest"] for l in manifest["layers"]],
                   "diff_ids": config["rootfs"]["diff_ids"], "members": members,
                   "trailer": trailer.hex()}, o)
    inline = sum(1 for m in members if "inline" in m)
    print(f"gpu_layer: {manifest_digest}: layer {gi} of {len(manifest['layers'])}, "
          f"{len(members)} entries, {inline} carried, the rest read from the host's wheels")


def assemble(stage, site, root):
    spec = read_json(os.path.join(stage, "gpu_layer.json"))
    gi = spec["gpu_layer"]
    bad = []
    # The chain from the image's digest: manifest bytes -> config digest -> diff_ids.
    with open(os.path.join(stage, "manifest.json"), "rb") as f:
        manifest_bytes = f.read()
    with open(os.path.join(stage, "config.json"), "rb") as f:
        config_bytes = f.read()
    manifest = json.loads(manifest_bytes)
    if "sha256:" + hashlib.sha256(manifest_bytes).hexdigest() != spec["manifest_digest"]:
        bad.append(f"the carried manifest is not {spec['manifest_digest']}")
    if "sha256:" + hashlib.sha256(config_bytes).hexdigest() != manifest["config"]["digest"]:
        bad.append(f"the carried config is not the manifest's {manifest['config']['digest']}")
    spec["diff_ids"] = json.loads(config_bytes)["rootfs"]["diff_ids"]
    print(f"image {spec['manifest_digest']}: manifest and config "
          f"{'match it' if not bad else 'DO NOT match it'}")
    # The gpu layer's tar stream, rebuilt and hashed; written to disk for unpacking.
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    rebuilt = os.path.join(root + ".gpu.tar")
    h = hashlib.sha256()
    from_host = 0
    with open(rebuilt, "wb") as out:
        def put(b):
            h.update(b)
            out.write(b)
        for m in spec["members"]:
            put(bytes.fromhex(m["header"]))
            if "sha256" not in m:
                continue
            if "inline" in m:
                path = os.path.join(stage, "inline", m["inline"])
            else:
                path = os.path.join(site, m["name"][len(SITE_PREFIX):])
                from_host += 1
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                bad.append(f"{m['name']}: not readable at {path} ({e.strerror})")
                data = b"\0" * m["size"]
            if len(data) != m["size"] or hashlib.sha256(data).hexdigest() != m["sha256"]:
                if os.path.exists(path):
                    bad.append(f"{m['name']}: {path} differs from the image's file "
                               f"({len(data)} bytes, expected {m['size']} with sha256 {m['sha256']})")
            put(data + b"\0" * (-len(data) % BLOCK))
        put(bytes.fromhex(spec["trailer"]))
    got = "sha256:" + h.hexdigest()
    want = spec["diff_ids"][gi]
    print(f"gpu layer: rebuilt from {from_host} host files and the carried ones: {got}; "
          f"the image's diff_id {want}: {'equal' if got == want else 'DIFFERENT'}")
    if got != want:
        bad.append(f"gpu layer diff_id {got} is not the image's {want}")
    for i, diff_id in enumerate(spec["diff_ids"]):
        if i == gi:
            continue
        path = os.path.join(stage, f"layer{i}.tar")
        with open(path, "rb") as f:
            d = "sha256:" + hashlib.sha256(f.read()).hexdigest()
        print(f"layer {i}: {d}: {'equal to the diff_id' if d == diff_id else 'DIFFERENT from ' + diff_id}")
        if d != diff_id:
            bad.append(f"layer {i} tar {d} is not the image's diff_id {diff_id}")
    for i in range(len(spec["layers"])):
        path = rebuilt if i == gi else os.path.join(stage, f"layer{i}.tar")
        with tarfile.open(path, "r:*") as t:
            # The image's own layers, checked above: modes, owners and links as written.
            if hasattr(tarfile, "fully_trusted_filter"):
                t.extractall(root, filter="fully_trusted")
            else:
                t.extractall(root)
    os.remove(rebuilt)
    for b in bad:
        print("FAIL " + b)
    print(f"image {spec['manifest_digest']} assembled in {root}: "
          f"{'every layer byte for byte the image' if not bad else str(len(bad)) + ' problems'}")
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "split":
        inline = 262144
        if "--inline-below" in argv:
            inline = int(argv[argv.index("--inline-below") + 1])
        split(argv[1], argv[2], inline)
        return 0
    if len(argv) == 4 and argv[0] == "assemble":
        return assemble(argv[1], argv[2], argv[3])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
