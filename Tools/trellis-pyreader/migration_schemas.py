#!/usr/bin/env python3
"""Edits the demo store's schema (as `trellis info --json` prints it) for .ci/check-pyreader.sh.

    migration_schemas.py STAGE INFO.json OUT.json

Stage 1 renames, widens Int to Double, makes an attribute optional, adds an attribute of every type (with a default,
and some optional ones without), indexes of several shapes, a new entity and a new to-many relationship, and changes a
delete rule. Stage 2 removes that entity (it stays as a retired placeholder), removes attributes and a relationship,
makes the optional attribute required again (nulls become its default), widens Int8 to Int64 and renames an entity.
"""
import json
import sys

stage, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
doc = json.load(open(src))
schema = doc.get("schema", doc)
ents = {e["name"]: e for e in schema["entities"]}
if stage == "1":
    item = ents["Item"]
    for a in item["attributes"]:
        if a["name"] == "title":
            a["name"], a["originalName"] = "headline", "title"
        if a["name"] == "rank":
            a["type"] = "Double"          # Int -> Double: integers become doubles
        if a["name"] == "done":
            a["optional"] = True
    item["attributes"] += [
        {"name": "b", "type": "Bool", "default": True},
        {"name": "i8", "type": "Int8", "default": -8},
        {"name": "i16", "type": "Int16", "default": 300},
        {"name": "i32", "type": "Int32", "default": -70000},
        {"name": "i64", "type": "Int64", "default": 9007199254740993},
        {"name": "f", "type": "Float", "default": 0.1},
        {"name": "d", "type": "Double", "default": 9007199254740994.0},
        {"name": "d2", "type": "Double", "default": -1.5e-7},
        {"name": "s", "type": "String", "default": "h\u00e9llo \"q\" \\ \n\t\u0001 \u2028 \U0001F600"},
        {"name": "dt", "type": "Date", "default": "2024-02-29T12:34:56.789012Z"},
        {"name": "dt0", "type": "Date", "default": "1969-12-31T23:59:59.5Z"},
        {"name": "bytes", "type": "Data", "default": "AAECAwT/"},
        {"name": "u", "type": "UUID", "default": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"},
        {"name": "link", "type": "URL", "default": "https://example.com/a%20b?q=1#f"},
        {"name": "dec", "type": "Decimal", "default": "-12.345"},
        {"name": "none", "type": "String", "optional": True},
        {"name": "noneDate", "type": "Date", "optional": True},
        {"name": "noneData", "type": "Data", "optional": True},
        {"name": "noneInt", "type": "Int16", "optional": True},
    ]
    item["indexes"] += [{"attributes": ["headline"]}, {"attributes": ["done", "headline"]},
                        {"attributes": ["dt"]}, {"attributes": ["u", "dec"]}]
    item["relationships"].append({"name": "tags", "target": "Tag", "inverse": "items", "toMany": True})
    for r in ents["Folder"]["relationships"]:
        if r["name"] == "items":
            r["deleteRule"] = "no action"
    schema["entities"].append({"name": "Tag", "attributes": [{"name": "label", "type": "String", "default": "t"}],
                               "relationships": [{"name": "items", "target": "Item", "inverse": "tags",
                                                  "toMany": True, "deleteRule": "deny"}]})
elif stage == "2":
    schema["entities"] = [e for e in schema["entities"] if e["name"] != "Tag"]
    item = ents["Item"]
    item["relationships"] = [r for r in item["relationships"] if r["name"] != "tags"]
    item["attributes"] = [a for a in item["attributes"] if a["name"] not in ("i16", "none")]
    for a in item["attributes"]:
        if a["name"] == "done":
            a["optional"] = False          # required again, with its default: nulls become false
        if a["name"] == "i8":
            a["type"] = "Int64"            # widened in place
    ents["Folder"]["name"], ents["Folder"]["originalName"] = "Directory", "Folder"
    for e in schema["entities"]:
        for r in e["relationships"]:
            if r["target"] == "Folder":
                r["target"] = "Directory"
    ents["Folder"]["indexes"] = []
json.dump(schema, open(dst, "w"), indent=1)
