#!/usr/bin/env python3
"""crd_schemas.py: writes kubeconform schemas from CustomResourceDefinitions.

Usage: crd_schemas.py OUT_DIR CRD.yaml...

Each served version of each CRD becomes OUT_DIR/<group>/<kind lower-case>_<version>.json, the
layout of kubeconform's `-schema-location 'OUT_DIR/{{ .Group }}/{{ .ResourceKind }}_{{
.ResourceAPIVersion }}.json'`. The CRD's openAPIV3Schema is made a strict JSON schema as the API
server applies it: an object that lists properties refuses others (unless it carries
x-kubernetes-preserve-unknown-fields or its own additionalProperties), `nullable` admits null,
x-kubernetes-int-or-string admits an integer or a string, and apiVersion and kind are fixed to
the resource's. Run by scripts/deploy_tools_env.sh (setup.sh) on the CRDs of the module zips
pinned in deploy/lock/tools.lock."""

import json
import os
import sys

import yaml


def strict(node):
    """The JSON-schema form of one openAPIV3Schema node (a new dict; `node` is left as is)."""
    if isinstance(node, list):
        return [strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties", "definitions"):
            out[key] = {name: strict(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = strict(value)
        elif key in ("nullable", "x-kubernetes-int-or-string"):
            continue  # applied below
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}] + out.get("anyOf", [])
    if ("properties" in out and "additionalProperties" not in out
            and not node.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    if node.get("nullable"):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif "anyOf" in out:
            out["anyOf"].append({"type": "null"})
    return out


def write_crd(crd, out_dir):
    """Writes one file per version of `crd`; returns the paths written."""
    spec = crd["spec"]
    group, kind = spec["group"], spec["names"]["kind"]
    written = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        schema = strict(version["schema"]["openAPIV3Schema"])
        props = schema.setdefault("properties", {})
        props["apiVersion"] = {"type": "string", "enum": [f"{group}/{version['name']}"]}
        props["kind"] = {"type": "string", "enum": [kind]}
        schema.setdefault("additionalProperties", False)
        schema["$schema"] = "http://json-schema.org/draft-07/schema#"
        path = os.path.join(out_dir, group, f"{kind.lower()}_{version['name']}.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(schema, f, indent=1, sort_keys=True)
            f.write("\n")
        written.append(path)
    return written


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: crd_schemas.py OUT_DIR CRD.yaml...")
    out_dir = argv[1]
    for path in argv[2:]:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        crds = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
        if not crds:
            sys.exit(f"crd_schemas.py: {path} holds no CustomResourceDefinition")
        for crd in crds:
            for written in write_crd(crd, out_dir):
                print(f"crd_schemas.py: {written}")


if __name__ == "__main__":
    main(sys.argv)
