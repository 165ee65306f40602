#!/usr/bin/env python3
"""The elements' documentation agrees with the plugin just built.

Reads the elements through GObject introspection (GST_PLUGIN_PATH points at
the build) and checks docs/elements.md and docs/rd.md against them:

- every property row of an element's tables in docs/elements.md names a
  property the element has, with the documented type, range (enum values
  included), default and the state it may change in; every property the
  plugin adds is documented;
- the tables of the modes each encoder element has (docs/elements.md, and
  the "where" column of docs/rd.md's Modes table) list the values of that
  element's `mode` property;
- no property blurb or enum value description limits a property to one
  element or backend ("c63enc only for now"), and no sentence of README.md,
  CONTRIBUTING.md or docs/*.md says an element lacks a mode the tables give
  it.

c63cudaenc registers only where a CUDA device is usable. Without one, its
properties are read from the encoder base class it shares with c63enc (the
mode property and its values are defined there), and its own
cuda-device-id row is left unchecked.

Usage: test_doc_properties.py SOURCE_DIR (with GST_PLUGIN_PATH set)."""
import os
import re
import sys

ELEMENTS = ["c63enc", "c63cudaenc", "c63dec", "c63parse"]
# c63cudaenc "has everything c63enc has": its section lists only its own rows.
DOC_INHERITS = {"c63cudaenc": "c63enc"}
# What the "where" column of docs/rd.md's Modes table calls each encoder.
BACKEND_WORD = {"c63enc": "CPU", "c63cudaenc": "CUDA"}
RESTRICTION = re.compile(
    r"\bonly\b|\byet\b|\bfor now\b|\bso far\b|\bnot supported\b|\bunsupported\b|\bhas no\b",
    re.IGNORECASE)
NAMES_ELEMENT = re.compile(r"\bc63(?:cuda)?enc\b|\bCPU\b|\bGPU\b|\bCUDA\b")

failures = []


def fail(msg):
    failures.append(msg)


def load_gi():
    """PyGObject, or exit 77 (skip) without it."""
    try:
        import gi
        gi.require_version("Gst", "1.0")
        from gi.repository import GObject, Gst
        return GObject, Gst
    except (ImportError, ValueError):
        if sys.executable != "/usr/bin/python3" and os.access("/usr/bin/python3", os.X_OK):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        print("SKIP: no Python with PyGObject (apt-get install python3-gi gir1.2-gstreamer-1.0)")
        sys.exit(77)


# ---- the plugin ------------------------------------------------------------

class Prop:
    """What the docs are compared with: one property of one element."""

    def __init__(self, GObject, Gst, pspec, instance):
        self.name = pspec.name
        self.owner = pspec.owner_type.name
        self.type = pspec.value_type
        self.type_name = pspec.value_type.name
        self.blurb = pspec.blurb or ""
        self.minimum = getattr(pspec, "minimum", None)
        self.maximum = getattr(pspec, "maximum", None)
        self.flags = int(pspec.flags)
        self.mutable_playing = bool(self.flags & int(Gst.PARAM_MUTABLE_PLAYING))
        self.mutable_ready = bool(self.flags & int(Gst.PARAM_MUTABLE_READY))
        self.enum = None  # {nick: (value, description)}
        if GObject.type_is_a(self.type, GObject.TYPE_ENUM):
            values = pspec.enum_class.__enum_values__.values()
            self.enum = {v.value_nick: (int(v), v.value_name) for v in values}
        self.default = pspec.default_value
        if instance is not None:
            try:
                self.default = instance.get_property(self.name)
            except TypeError:  # a type PyGObject cannot convert (GstFraction)
                self.default = None


def introspect():
    """{element: {property: Prop}} and a note per element read indirectly."""
    GObject, Gst = load_gi()
    Gst.init(None)
    found, notes = {}, {}
    for name in ELEMENTS:
        factory = Gst.ElementFactory.find(name)
        if factory is None:
            continue
        gtype = factory.load().get_element_type()
        instance = Gst.ElementFactory.make(name, None)
        found[name] = {p.name: Prop(GObject, Gst, p, instance)
                       for p in GObject.list_properties(gtype)}
    for name in ("c63enc", "c63dec", "c63parse"):
        if name not in found:
            fail("%s is not registered: is GST_PLUGIN_PATH the build's gst/ folder?" % name)
    if "c63enc" in found and "c63cudaenc" not in found:
        base = GObject.type_parent(Gst.ElementFactory.find("c63enc").load().get_element_type())
        found["c63cudaenc"] = {p.name: Prop(GObject, Gst, p, None)
                               for p in GObject.list_properties(base)}
        notes["c63cudaenc"] = "read from %s (no CUDA device here)" % base.name
    return found, notes


# ---- the docs --------------------------------------------------------------

def split_cells(line):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return cells


def tables(lines):
    """(heading, header cells, [row cells]) for every Markdown table;
    heading is the last level-2 heading above it."""
    out, heading, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            heading = line[3:].strip()
        if (line.startswith("|") and i + 1 < len(lines)
                and re.match(r"^\|[\s:|-]+\|\s*$", lines[i + 1])):
            header = [c.lower() for c in split_cells(line)]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(split_cells(lines[i]))
                i += 1
            out.append((heading, header, rows))
            continue
        i += 1
    return out


def ticked(text):
    return re.findall(r"`([^`]+)`", text)


def cell(header, row, *names):
    for n in names:
        if n in header and header.index(n) < len(row):
            return row[header.index(n)]
    return None


def documented_properties(md_lines):
    """{element: [(property, header, row)]} from docs/elements.md."""
    out = {}
    for heading, header, rows in tables(md_lines):
        if heading not in ELEMENTS or header[0] not in ("name", "property"):
            continue
        for row in rows:
            names = ticked(row[0])
            if names:
                out.setdefault(heading, []).append((names[0], header, row))
    for child, parent in DOC_INHERITS.items():
        out[child] = out.get(parent, []) + out.get(child, [])
    return out


# ---- the checks ------------------------------------------------------------

TYPE_WORDS = {"int": "gint", "uint": "guint", "uint64": "guint64", "int64": "gint64",
              "boolean": "gboolean", "fraction": "GstFraction"}


def check_row(element, prop, header, row):
    where = "docs/elements.md, %s, `%s`" % (element, prop.name)
    type_cell = cell(header, row, "type") or ""
    first = re.split(r"[\s,]", type_cell.strip())[0].lower()
    if first == "enum":
        if prop.enum is None:
            fail("%s: documented as an enum, the element's is %s" % (where, prop.type_name))
    elif first in TYPE_WORDS and TYPE_WORDS[first] != prop.type_name:
        fail("%s: documented as %s, the element's is %s" % (where, first, prop.type_name))

    range_cell = cell(header, row, "range") or type_cell
    if prop.enum is not None:
        nicks = [t for t in ticked(range_cell) if t != prop.type_name]
        if set(nicks) != set(prop.enum):
            fail("%s: documented values %s, the element's are %s"
                 % (where, sorted(nicks), sorted(prop.enum)))
        for nick, value in re.findall(r"`([^`]+)`\s*\((-?\d+)\)", range_cell):
            if nick in prop.enum and prop.enum[nick][0] != int(value):
                fail("%s: `%s` documented as %s, the element's is %d"
                     % (where, nick, value, prop.enum[nick][0]))
    elif prop.minimum is not None:
        m = re.search(r"(-?\d+)\s*(?:to|\.\.)\s*(-?\d+)", range_cell)
        if m and (int(m.group(1)), int(m.group(2))) != (prop.minimum, prop.maximum):
            fail("%s: documented range %s..%s, the element's is %s..%s"
                 % (where, m.group(1), m.group(2), prop.minimum, prop.maximum))

    default = (cell(header, row, "default") or "").strip("` ")
    if default and prop.default is not None:
        actual = prop.default
        if prop.enum is not None:
            actual = actual.value_nick if hasattr(actual, "value_nick") else actual
        elif isinstance(actual, bool):
            actual = "true" if actual else "false"
        elif hasattr(actual, "num"):  # Gst.Fraction
            actual = "%d/%d" % (actual.num, actual.denom)
        if str(actual) != default:
            fail("%s: documented default %s, the element's is %s" % (where, default, actual))

    changeable = (cell(header, row, "changeable") or "").lower()
    if "any state" in changeable and not prop.mutable_playing:
        fail("%s: documented as changeable in any state; the element's flags say not "
             "while PLAYING" % where)
    if "null or ready" in changeable and (prop.mutable_playing or not prop.mutable_ready):
        fail("%s: documented as changeable in NULL or READY only; the element's flags say %s"
             % (where, "also while PLAYING" if prop.mutable_playing else "not in READY"))


def check_properties(found, notes, documented):
    for element, props in found.items():
        rows = documented.get(element, [])
        names = set()
        for name, header, row in rows:
            names.add(name)
            if name not in props:
                if element in notes:
                    print("not checked: %s.%s (%s)" % (element, name, notes[element]))
                else:
                    fail("docs/elements.md documents %s.%s, which the element lacks"
                         % (element, name))
                continue
            check_row(element, props[name], header, row)
        for prop in props.values():
            if prop.owner.startswith("GstC63") and prop.name not in names:
                fail("%s.%s is not in docs/elements.md's property tables" % (element, prop.name))


def check_blurbs(found):
    for element, props in found.items():
        for prop in props.values():
            if not prop.owner.startswith("GstC63"):
                continue
            texts = [("blurb", prop.blurb)]
            if prop.enum:
                texts += [("value `%s`" % n, d) for n, (_, d) in prop.enum.items()]
            for what, text in texts:
                for clause in re.split(r"[.;()]", text):
                    if NAMES_ELEMENT.search(clause) and RESTRICTION.search(clause):
                        fail("%s.%s, %s: \"%s\" limits it to an element or backend; the "
                             "docs' tables say which elements have what"
                             % (element, prop.name, what, clause.strip()))


def modes_of(found, element):
    prop = found.get(element, {}).get("mode")
    return set(prop.enum) if prop is not None and prop.enum else None


def check_modes_tables(found, elements_md, rd_md):
    encoders = [e for e in ELEMENTS if modes_of(found, e) is not None]
    seen = set()
    for heading, header, rows in tables(elements_md):
        if header[0] != "element" or "modes" not in header:
            continue
        for row in rows:
            element = ticked(row[0])[0] if ticked(row[0]) else row[0]
            listed = set(ticked(cell(header, row, "modes").split("(")[0]))
            seen.add(element)
            actual = modes_of(found, element)
            if actual is None:
                fail("docs/elements.md's modes table lists %s, which has no mode property"
                     % element)
            elif listed != actual:
                fail("docs/elements.md's modes table gives %s %s; its mode property has %s"
                     % (element, sorted(listed), sorted(actual)))
    for element in encoders:
        if element not in seen:
            fail("%s has a mode property but no row in docs/elements.md's modes table" % element)

    rd_rows = [(header, rows) for heading, header, rows in tables(rd_md)
               if heading == "Modes" and header[0] == "mode" and "where" in header]
    if not rd_rows:
        fail("docs/rd.md has no Modes table (mode | ... | where)")
        return
    header, rows = rd_rows[0]
    listed = set()
    for row in rows:
        mode = ticked(row[0])[0]
        listed.add(mode)
        where = cell(header, row, "where")
        for element in encoders:
            has = mode in modes_of(found, element)
            says = re.search(r"\b%s\b" % BACKEND_WORD[element], where) is not None
            if has != says:
                fail("docs/rd.md's Modes table: `%s` %s on %s, but %s %s it"
                     % (mode, "listed" if says else "not listed", BACKEND_WORD[element],
                        element, "has" if has else "lacks"))
    union = set().union(*(modes_of(found, e) for e in encoders)) if encoders else set()
    if listed != union:
        fail("docs/rd.md's Modes table lists %s; the elements have %s"
             % (sorted(listed), sorted(union)))


def sentences(text):
    """The sentences of table cells, and the sentences (or clauses between semicolons) of each
    paragraph and list item."""
    in_code = False
    para = []
    for line in text.splitlines() + [""]:
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or line.startswith("    "):
            continue
        if line.startswith("|"):
            # a row's cells are read as sentences of their own, so that a
            # state column ("refused above READY") is not read together with
            # the element named in another cell
            for cell in line.strip().strip("|").split("|"):
                yield from re.split(r"(?<=[.!?])\s+(?=[A-Z`(])|;\s", cell.strip())
            continue
        item = re.match(r"^\s*(?:[-*]|\d+\.)\s", line)
        if para and (item or not line.strip()):
            yield from re.split(r"(?<=[.!?])\s+(?=[A-Z`(])|;\s", " ".join(para))
            para = []
        if line.strip():
            para.append(line.strip())


def check_prose(found, root):
    """No sentence says an element (or its backend) lacks a mode it has."""
    holders = {}
    for element in ("c63enc", "c63cudaenc"):
        for mode in modes_of(found, element) or ():
            holders.setdefault(mode, []).append(element)
    backend_words = {"c63enc": r"c63enc|the CPU|CPU backend",
                     "c63cudaenc": r"c63cudaenc|the GPU|CUDA|GPU backend"}
    lacks = re.compile(r"\bhas no\b|\bnot yet\b|\byet\b|\bfor now\b|\bso far\b|"
                       r"\bunsupported\b|\bnot supported\b|\binvalid\b|\brefuse", re.IGNORECASE)
    paths = ["README.md", "CONTRIBUTING.md"]
    paths += [os.path.join("docs", f) for f in sorted(os.listdir(os.path.join(root, "docs")))
              if f.endswith(".md")]
    for rel in paths:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        for sentence in sentences(open(path, encoding="utf-8").read()):
            for mode, elements in holders.items():
                if not re.search(r"`%s`|mode=%s\b|-m %s\b" % (mode, mode, mode), sentence):
                    continue
                for element in elements:
                    if re.search(backend_words[element], sentence) and lacks.search(sentence):
                        fail("%s: \"%s\" reads as %s lacking `%s`, which it has"
                             % (rel, sentence.strip()[:300], element, mode))


def main():
    root = sys.argv[1]
    found, notes = introspect()
    md = open(os.path.join(root, "docs", "elements.md"), encoding="utf-8").read().splitlines()
    rd = open(os.path.join(root, "docs", "rd.md"), encoding="utf-8").read().splitlines()
    if found:
        check_properties(found, notes, documented_properties(md))
        check_blurbs(found)
        check_modes_tables(found, md, rd)
        check_prose(found, root)
    for f in failures:
        print("FAIL: " + f)
    checked = sum(len(p) for p in found.values())
    print("%d properties of %d elements read, %d disagreements" % (checked, len(found),
                                                                      len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
