#!/usr/bin/env python3
"""Generate compiler/ub_schema_tables.h: the facts of OpenUSD's published
schemas that flattening needs -- every schema's kind, TfType name, base, built-in API
schemas, auto-apply targets, override property names and its properties
(type name, variability, fallback as usda text).

Facts only: how they combine into a prim definition (built-in expansion,
instance names, strength) is compiler/ub_schema.c's business, the same code
that reads a studio's own schemas from PXR_PLUGINPATH_NAME.

Inputs are an OpenUSD source tree's schema libraries: for each directory
pxr/usd/<lib> with a generatedSchema.usda, that file and the plugInfo.json
beside it (its "Types": schemaKind, bases, alias, apiSchemaAutoApplyTo).

Regenerate for a new OpenUSD release (and say which in the commit):
    python3 compiler/ub_schema_tables.py /path/to/OpenUSD/pxr/usd \\
        > compiler/ub_schema_tables.h
"""

import json
import os
import re
import sys

KINDS = {
    "concreteTyped": "UB_SCHEMA_CONCRETE",
    "abstractTyped": "UB_SCHEMA_ABSTRACT",
    "abstractBase": "UB_SCHEMA_ABSTRACT",
    "nonAppliedAPI": "UB_SCHEMA_NONAPPLIED",
    "singleApplyAPI": "UB_SCHEMA_SINGLE_API",
    "multipleApplyAPI": "UB_SCHEMA_MULTI_API",
}


def read_json(path):
    """plugInfo.json allows '#' comments to the end of a line."""
    out = []
    with open(path) as f:
        for line in f:
            in_str = False
            esc = False
            for i, c in enumerate(line):
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == '"':
                    in_str = not in_str
                elif c == "#" and not in_str:
                    line = line[:i] + "\n"
                    break
            out.append(line)
    return json.loads("".join(out))


CLASS_RE = re.compile(r'^class (?:(\w+) )?"(\w+)"')
PROP_RE = re.compile(
    r'^    (?:custom )?(uniform )?(?:(rel)|(\S+)) ([\w:]+)(?: = (.*?))?(?: \()?$')
LIST_RE = re.compile(r'\[([^\]]*)\]')


def names(text):
    """The strings of the list value after the '=' of a line."""
    m = LIST_RE.search(text, text.index("="))
    return re.findall(r'"([^"]*)"', m.group(1)) if m else []


def read_schema(path):
    """Each top-level class of a generatedSchema.usda: its apiSchemas,
    override property names and properties (in file order).  The file is
    usdGenSchema's output, so its layout is regular: a class's metadata in
    parentheses, then its body in braces with one property a line at four
    spaces, each property's own metadata in parentheses closed at four."""
    schemas = {}
    cur = None
    state = None    # "meta" (class metadata), "body", "prop" (its metadata)
    quote = None    # the open triple quote of a multi-line string
    with open(path) as f:
        lines = f.read().split("\n")
    for line in lines:
        if quote:
            if quote in line:
                quote = None
            continue
        for q in ('"""', "'''"):
            if line.count(q) % 2 == 1:
                quote = q
        m = CLASS_RE.match(line)
        if m:
            cur = {"props": [], "apis": [], "overrides": []}
            schemas[m.group(2)] = cur
            state = "meta"
            continue
        if cur is None:
            continue
        if state == "meta":
            if re.match(r'^    (prepend |append )?apiSchemas = ', line):
                cur["apis"] += names(line)
            elif "apiSchemaOverridePropertyNames" in line:
                cur["overrides"] += names(line)
            elif line.startswith("{"):
                state = "body"
        elif state == "prop":
            if line == "    )":
                state = "body"
        elif state == "body":
            if line.startswith("}"):
                cur, state = None, None
                continue
            m = PROP_RE.match(line)
            if m:
                uniform, rel, tyname, name, fallback = m.groups()
                cur["props"].append({
                    "name": name, "type": None if rel else tyname,
                    "uniform": bool(uniform), "fallback": fallback})
                if line.endswith(" ("):
                    state = "prop"
    return schemas


def c_str(s):
    if s is None:
        return "NULL"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    root = sys.argv[1]
    libs = sorted(d for d in os.listdir(root)
                  if os.path.isfile(os.path.join(root, d,
                                                 "generatedSchema.usda")))
    entries = {}
    infos = [(lib, read_json(os.path.join(root, lib, "plugInfo.json")))
             for lib in libs]
    # TfType name -> schema identifier, over every library (a base may live
    # in another library: usdLux's lights derive from usdGeom's Boundable).
    alias = {"UsdTyped": "Typed", "UsdAPISchemaBase": "APISchemaBase",
             "UsdSchemaBase": None}
    for lib, info in infos:
        for plugin in info.get("Plugins", []):
            for t, v in plugin.get("Info", {}).get("Types", {}).items():
                if "UsdSchemaBase" in v.get("alias", {}):
                    alias[t] = v["alias"]["UsdSchemaBase"]
    for lib, info in infos:
        schemas = read_schema(os.path.join(root, lib, "generatedSchema.usda"))
        for plugin in info.get("Plugins", []):
            types = plugin.get("Info", {}).get("Types", {})
            for tfname, t in sorted(types.items()):
                kind = t.get("schemaKind")
                ident = alias.get(tfname)
                if kind not in KINDS or ident not in schemas:
                    continue
                bases = [alias.get(b) for b in t.get("bases", [])]
                d = schemas[ident]
                entries[ident] = {
                    "tf": tfname, "lib": lib, "kind": KINDS[kind],
                    "base": bases[0] if bases else None,
                    "apis": d["apis"], "overrides": d["overrides"],
                    "props": d["props"],
                    "auto": t.get("apiSchemaAutoApplyTo", [])}
    out = ["/* Generated by compiler/ub_schema_tables.py from OpenUSD's",
           " * generatedSchema.usda and plugInfo.json files; do not edit. */",
           "#ifndef UB_SCHEMA_TABLES_H", "#define UB_SCHEMA_TABLES_H", "",
           "/* OpenUSD release these facts were read from. */",
           "#define UB_SCHEMA_TABLES_RELEASE \"%s\"" % sys.argv[2]
           if len(sys.argv) > 2 else
           "#define UB_SCHEMA_TABLES_RELEASE \"24.08\"", "",
           "static const ub_schema_prop_fact ub_schema_prop_facts[] = {"]
    strs = []
    for ident in sorted(entries):
        e = entries[ident]
        e["prop0"] = sum(len(entries[i]["props"]) for i in sorted(entries)
                         if i < ident)
        for p in e["props"]:
            out.append("    {%s, %s, %d, %s}," % (
                c_str(p["name"]), c_str(p["type"]), int(p["uniform"]),
                c_str(p["fallback"])))
    out.append("};")
    out.append("")
    out.append("static const char *const ub_schema_name_facts[] = {")
    for ident in sorted(entries):
        e = entries[ident]
        for key in ("apis", "auto", "overrides"):
            e[key + "0"] = len(strs)
            strs += e[key]
    for s in strs:
        out.append("    %s," % c_str(s))
    out.append("    NULL};")
    out.append("")
    out.append("/* Sorted by name (strcmp). */")
    out.append("static const ub_schema_fact ub_schema_facts[] = {")
    for ident in sorted(entries):
        e = entries[ident]
        out.append("    {%s, %s, %s, %s, %s, %d, %d, %d, %d, %d, %d, %d, %d},"
                   % (c_str(ident), c_str(e["tf"]), c_str(e["lib"]), e["kind"], c_str(e["base"]),
            e["prop0"], len(e["props"]), e["apis0"], len(e["apis"]),
            e["auto0"], len(e["auto"]), e["overrides0"],
            len(e["overrides"])))
    out.append("};")
    out.append("")
    out.append("#endif")
    print("\n".join(out))


main()
