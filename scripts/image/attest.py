#!/usr/bin/env python3
"""attest.py: the signed build attestation of an image layout.

Usage: attest.py --layout DIR --lock LOCK --variant cpu|gpu --key PRIVATE.pem --out FILE
                 [--builder-id URI] [--started RFC3339]

Writes FILE: a DSSE envelope (payloadType application/vnd.in-toto+json) around an in-toto
Statement v1 whose subject is the layout's image manifest (sha256 of the manifest blob
that index.json names) and whose predicate is SLSA Provenance v1: resolvedDependencies are
the lock's inputs of that variant (the source commit as gitCommit, each Debian suite's
InRelease, each .deb and wheel by sha256) plus the lock file itself. The signature is
Ed25519 over the DSSE pre-authentication encoding, made by `openssl pkeyutl -rawin`; keyid
is the sha256 of the public key in DER form. `reactant-server verify-image` checks it.
"""
import argparse
import base64
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from lock import sha256_file  # scripts/image/lock.py

PAYLOAD_TYPE = "application/vnd.in-toto+json"
BUILD_TYPE = "urn:reactant-server:build-type:image-sh:v1"
DEFAULT_BUILDER = "urn:reactant-server:builder:image-sh"


def pae(payload_type, body):
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def materials(lock, lock_path, variant):
    """The lock's inputs of `variant` as in-toto ResourceDescriptors."""
    out = [{"name": "source", "uri": "git+reactant-server",
            "digest": {"gitCommit": lock["source"]["commit"]}}]
    for s in lock["debian"]["suites"]:
        out.append({"name": f"debian-suite:{s['codename']}/{s['component']}",
                    "digest": {"sha256": s["inrelease_sha256"]},
                    "annotations": {"date": s["date"]}})
    for e in lock["debian"]["packages"]:
        if variant in e["variants"]:
            out.append({"name": f"deb:{e['name']}", "uri": e["purl"],
                        "digest": {"sha256": e["sha256"]}, "annotations": {"filename": e["filename"]}})
    for e in lock["wheels"]:
        if variant in e["variants"]:
            out.append({"name": f"pypi:{e['name']}", "uri": e["purl"],
                        "digest": {"sha256": e["sha256"]}, "annotations": {"filename": e["filename"]}})
    out.append({"name": "lock", "uri": "deploy/lock/" + os.path.basename(lock_path),
                "digest": {"sha256": sha256_file(lock_path)}})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layout", required=True)
    ap.add_argument("--lock", required=True)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--builder-id", default=DEFAULT_BUILDER)
    ap.add_argument("--started", default="")
    a = ap.parse_args()
    with open(os.path.join(a.layout, "index.json")) as f:
        index = json.load(f)
    if len(index["manifests"]) != 1:
        sys.exit(f"attest: {a.layout}/index.json lists {len(index['manifests'])} manifests, "
                 f"expected one")
    desc = index["manifests"][0]
    algo, hexd = desc["digest"].split(":")
    if sha256_file(os.path.join(a.layout, "blobs", algo, hexd)) != hexd:
        sys.exit(f"attest: the manifest blob {desc['digest']} does not hash to its name")
    with open(a.lock) as f:
        lock = json.load(f)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    ref = desc.get("annotations", {}).get("org.opencontainers.image.ref.name", a.variant)
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": f"reactant-server:{ref}", "digest": {"sha256": hexd}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {"variant": a.variant, "version": lock["version"],
                                       "source_date_epoch": lock["source"]["source_date_epoch"],
                                       "lock": "deploy/lock/" + os.path.basename(a.lock)},
                "resolvedDependencies": materials(lock, a.lock, a.variant),
            },
            "runDetails": {
                "builder": {"id": a.builder_id,
                            "builderDependencies": [{"name": k, "annotations": {"version": v}}
                                                    for k, v in sorted(lock["tools"].items())]},
                "metadata": {"startedOn": a.started or now, "finishedOn": now},
            },
        },
    }
    body = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    with tempfile.TemporaryDirectory() as tmp:
        msg, sig = os.path.join(tmp, "pae"), os.path.join(tmp, "sig")
        with open(msg, "wb") as f:
            f.write(pae(PAYLOAD_TYPE, body))
        subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", a.key, "-in", msg,
                        "-out", sig], check=True)
        with open(sig, "rb") as f:
            signature = f.read()
        der = subprocess.run(["openssl", "pkey", "-in", a.key, "-pubout", "-outform", "DER"],
                             check=True, capture_output=True).stdout
    envelope = {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(body).decode(),
                "signatures": [{"keyid": hashlib.sha256(der).hexdigest(),
                                "sig": base64.b64encode(signature).decode()}]}
    with open(a.out, "w") as f:
        json.dump(envelope, f, indent=1)
        f.write("\n")
    print(f"attest: {a.out}: subject sha256:{hexd}, "
          f"{len(statement['predicate']['buildDefinition']['resolvedDependencies'])} materials")
    return 0


if __name__ == "__main__":
    sys.exit(main())
