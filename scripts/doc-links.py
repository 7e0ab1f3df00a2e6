#!/usr/bin/env python3
"""A quick check of DocC symbol links (``Symbol``), run by `make test`.

`make docs` (DocC with --warnings-as-errors) is the real check, but it takes minutes, so
`make test` does not run it and its links rotted unseen. This catches in about a second what
rotted then: a link to a type of another module, or to an internal type, which DocC cannot
resolve. For each documented module (scripts/docs.sh's list) it reads the `///` comments of
its public declarations and the articles of its .docc catalog, and requires of every ``A/b/c``:
- A is the module itself, or a type declared `public` or `open` in the module;
- each further component (b, c: a member or nested type, without its disambiguation suffix)
  is declared in the module under that name.
A link without a slash may be relative to the documented type: its name must be declared in
the module, and if it starts with a capital letter (a type), declared public.
Exits 1 with each unresolved link's file and line.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MODULES = ["BluetoothCore", "BluetoothTransport", "BluetoothHCI", "BluetoothHost", "BluetoothVirtual",
           "GATTProfiles", "BluetoothPeripheral", "BluetoothSimulator", "Bluejay", "DBus"]

KINDS = r"(?:struct|class|enum|protocol|actor|typealias|associatedtype|func|var|let|case|init|subscript|macro)"
DECL = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*((?:(?:public|open|package|internal|private|fileprivate|final|static|"
                  r"class|mutating|nonisolated|override|convenience|required|indirect|lazy|weak|unowned|dynamic|"
                  r"distributed|consuming|borrowing)(?:\([^)]*\))?\s+)*)(" + KINDS + r")\b\s*`?([A-Za-z_][A-Za-z0-9_]*)?")
TYPE_KINDS = {"struct", "class", "enum", "protocol", "actor", "typealias", "associatedtype"}
LINK = re.compile(r"``([^`]+)``")


def strip_disambiguation(component):
    component = re.sub(r"-[0-9a-z]{4,6}$", "", component)   # an overload's hash suffix
    component = re.sub(r"-(?:swift\.)?[a-z.]+$", "", component)  # -swift.struct, -property, ...
    return component.split("(")[0]


def declarations(module_dir):
    """Every name declared in the module, and the public (or open) type names."""
    names, public_types = set(), set()
    for directory, _, files in os.walk(module_dir):
        for name in files:
            if not name.endswith(".swift"):
                continue
            with open(os.path.join(directory, name), encoding="utf-8") as source:
                for line in source:
                    if line.lstrip().startswith("//"):
                        continue
                    match = DECL.match(line)
                    if not match:
                        continue
                    modifiers, kind, identifier = match.groups()
                    if kind == "init":
                        names.add("init")
                    elif kind == "subscript":
                        names.add("subscript")
                    elif kind == "case":
                        # `case a, b(Int), c = 3`
                        for part in re.findall(r"(?:^|,)\s*([A-Za-z_][A-Za-z0-9_]*)", line.split("case", 1)[1]):
                            names.add(part)
                    elif identifier:
                        names.add(identifier)
                        if kind in TYPE_KINDS and re.search(r"\b(?:public|open)\b", modifiers or ""):
                            public_types.add(identifier)
                    # `var a, b: Int` and `let (a, b)` are rare enough to leave out.
    return names, public_types


def links(module_dir):
    """(file, line number, link) for each ``link`` in a .docc article, or in the /// comment
    of a public or open declaration (DocC reads no other comments: an internal symbol's are
    not in its symbol graph)."""
    for directory, _, files in os.walk(module_dir):
        for name in sorted(files):
            path = os.path.join(directory, name)
            in_catalog = ".docc" in directory and name.endswith(".md")
            if not (name.endswith(".swift") or in_catalog):
                continue
            with open(path, encoding="utf-8") as text:
                lines = text.readlines()
            if in_catalog:
                for number, line in enumerate(lines, 1):
                    for link in LINK.findall(line):
                        yield path, number, link
                continue
            comment = []
            for number, line in enumerate(lines, 1):
                stripped = line.lstrip()
                if stripped.startswith("///"):
                    comment.append((number, line))
                elif comment and stripped.startswith("@") and not DECL.match(line):
                    continue  # an attribute line between the comment and its declaration
                else:
                    if comment and re.match(r"\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public|open)\b", line):
                        for at, text_line in comment:
                            for link in LINK.findall(text_line):
                                yield path, at, link
                    comment = []


def problem(link, module, names, public_types):
    if not re.match(r"[A-Za-z_]", link):
        return None  # an operator, or code that is not a link
    components = [strip_disambiguation(c) for c in link.split("/") if c]
    if not components:
        return None
    first, rest = components[0], components[1:]
    if rest or first[:1].isupper():
        if first != module and first not in public_types:
            return f"{first} is not a public type of {module}" + (" (nor the module)" if rest else "")
    elif first not in names:
        return f"{first} is declared nowhere in {module}"
    for component in rest:
        if component and component not in names:
            return f"{component} is declared nowhere in {module}"
    return None


def main():
    failures = 0
    for module in MODULES:
        module_dir = os.path.join(ROOT, "Sources", module)
        names, public_types = declarations(module_dir)
        for path, number, link in links(module_dir):
            why = problem(link, module, names, public_types)
            if why:
                failures += 1
                print(f"{os.path.relpath(path, ROOT)}:{number}: ``{link}``: {why}", file=sys.stderr)
    if failures:
        print(f"error: {failures} DocC link(s) DocC would not resolve (scripts/doc-links.py; `make docs` is the full check)", file=sys.stderr)
        return 1
    print("doc links: every ``symbol`` link names a public type or a declared member of its module")
    return 0


if __name__ == "__main__":
    sys.exit(main())
