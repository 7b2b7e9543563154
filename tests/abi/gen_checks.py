#!/usr/bin/env python3
"""Generate the ABI checks of one DAT face from the reference fact files.

usage: gen_checks.py REFERENCE_DIR [--face 12|20] [--c OUT.c] [--rs OUT.rs]
                     [--proto OUT.c]

--face 12 (default) checks the DAT 1.2 headers (include/dat), --face 20 the
DAT 2.0 headers (include/dat2).  REFERENCE_DIR holds the face's layout dump
(layout-dat12-ofed-x86_64.txt / layout-dat20-ofed-x86_64.txt), constants.md
and the function list (dat12-functions.md / dat20-functions.md).
Defaults for the outputs (relative to the repository root, found from this
script's location):
    tests/abi/abi_checks.c / abi_checks_dat2.c    C11 / C++11 compile-time
                                                  checks (plus a few run-time
                                                  ones)
    crates/dat12/src/abi_layout_tests.rs /        the same facts as Rust unit
    crates/dat20/src/abi_layout_tests.rs          tests of each face crate's abi.rs
    tests/abi/prototypes_dat.c / prototypes_dat2.c  every function of the
                                                  function list declared again
                                                  exactly as listed there: a C
                                                  compiler rejects the file if
                                                  a header's prototype differs

What is checked:
  * every struct/union of the layout dump: sizeof, alignment, and for every
    (also nested) member its offset, its size and its declared type;
  * every constant of constants.md section 5 that has a value in the face's
    column ("1.2 OFED compat-dapl" or "2.0 OFED"; enumerators and integer
    #defines), and for 2.0 the IB extension enums of its last section;
  * the size of every enumerated type of those sections (4 bytes);
  * the scalar type sizes/alignments of constants.md section 4 (the rows of
    the face: 1.2 skips the "2.0 only" ones);
  * the prototype of every function of the function list.

The outputs are committed: a clone of the repository has no reference dir.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Constants whose value is a pointer: not integer constant expressions in C,
# so they are checked at run time.
POINTER_CONSTS = {"DAT_EVD_ASYNC_EXISTS", "DAT_EVD_OUT_OF_SCOPE", "DAT_HANDLE_NULL"}
# Pointer constants of constants.md section 3 whose 1.2 column in section 5
# is empty (the probe could not print them); value from section 3.
EXTRA_POINTER_CONSTS = [("DAT_HANDLE_NULL", 0)]


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------

class Face:
    """What differs between the DAT 1.2 and DAT 2.0 checks."""

    def __init__(self, name, include_dir, layout, functions, column, headers, out_c, out_rs, out_proto):
        self.name = name                # "1.2" / "2.0"
        self.include_dir = include_dir  # "dat" / "dat2"
        self.layout = layout            # layout dump file name
        self.functions = functions      # function list file name
        self.column = column            # index of the face's value column in constants.md section 5
        self.headers = headers          # headers abi_checks includes
        self.out_c = out_c              # default outputs, relative to the repository root
        self.out_rs = out_rs
        self.out_proto = out_proto


FACES = {
    "12": Face("1.2", "dat", "layout-dat12-ofed-x86_64.txt", "dat12-functions.md", 0,
               ["udat.h", "dat_registry.h"], "tests/abi/abi_checks.c",
               "crates/dat12/src/abi_layout_tests.rs", "tests/abi/prototypes_dat.c"),
    "20": Face("2.0", "dat2", "layout-dat20-ofed-x86_64.txt", "dat20-functions.md", 2,
               ["udat.h", "dat_registry.h", "dat_ib_extensions.h"], "tests/abi/abi_checks_dat2.c",
               "crates/dat20/src/abi_layout_tests.rs", "tests/abi/prototypes_dat2.c"),
}


class Field:
    def __init__(self, offset, ctype, path, via_union):
        self.offset = offset
        self.ctype = ctype          # type as printed in the layout dump
        self.path = path            # list of member names from the record
        self.via_union = via_union  # True if any container on the path is a union


class Record:
    def __init__(self, kind, tag):
        self.kind = kind            # "struct" or "union"
        self.tag = tag              # e.g. dat_ep_attr, or "dat_cno_param::(unnamed at ...)"
        self.unnamed = "(unnamed" in tag
        self.fields = []
        self.size = None
        self.align = None


def parse_layout(path):
    records = []
    cur = None
    stack = []  # (depth, name, kind-of-this-member-if-record)
    line_re = re.compile(r"^\s*(\d+) \|( +)(.*\S)\s*$")
    size_re = re.compile(r"^\s*\|\s*\[sizeof=(\d+), align=(\d+)\]")
    for line in open(path):
        m = size_re.match(line)
        if m:
            cur.size, cur.align = int(m.group(1)), int(m.group(2))
            records.append(cur)
            cur = None
            continue
        m = line_re.match(line)
        if not m:
            continue
        off, indent, text = int(m.group(1)), len(m.group(2)), m.group(3)
        depth = (indent - 1) // 2
        if depth == 0:
            kind, tag = text.split(" ", 1)
            cur = Record(kind, tag)
            stack = [(0, None, kind)]
            continue
        ctype, name = text.rsplit(" ", 1)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        via_union = any(k == "union" for (_, _, k) in stack)
        names = [n for (_, n, _) in stack if n is not None] + [name]
        cur.fields.append(Field(off, ctype.strip(), names, via_union))
        mk = re.match(r"^(struct|union) ", ctype)
        stack.append((depth, name, mk.group(1) if mk else None))
    return records


def parse_constants(path, column, with_ib_extensions):
    """Section 5 rows with a value in the face's column (0: 1.2 OFED,
    1: 1.2 Solaris, 2: 2.0 OFED), then, if with_ib_extensions, the rows of
    the IB extension enums section: list of (section, name, value) where
    section is an enum type name or '#define'."""
    out = []
    sec = None
    in5 = False
    for line in open(path):
        if line.startswith("## 5."):
            in5 = True
            continue
        if line.startswith("## ") and in5:
            in5 = False
        if not in5:
            continue
        m = re.match(r"### enum (\w+)", line)
        if m:
            sec = m.group(1)
            continue
        if line.startswith("### Integer #define"):
            sec = "#define"
            continue
        m = re.match(r"\| (DAT_\w+) \| (\S+) \| (\S+) \| (\S+) \|", line)
        if m and sec:
            v = m.group(2 + column)
            if not v.startswith("0x"):
                continue  # not defined in this face
            out.append((sec, m.group(1), int(v, 16)))
    if with_ib_extensions:
        out += parse_ib_extension_enums(path)
    return out


def parse_ib_extension_enums(path):
    """The "DAT 2.0 IB extension enums" section: (enum, name, value) rows."""
    out = []
    sec = None
    inside = False
    for line in open(path):
        if line.startswith("## "):
            inside = line.startswith("## DAT 2.0 IB extension enums")
            continue
        if not inside:
            continue
        m = re.match(r"### enum (\w+)", line)
        if m:
            sec = m.group(1)
            continue
        m = re.match(r"\| (\w+) \| (0x[0-9a-f]+) \|", line)
        if m and sec:
            out.append((sec, m.group(1), int(m.group(2), 16)))
    return out


def parse_scalar_sizes(path, with_20_only):
    """Section 4 rows: (type, size, align); the "2.0 only" rows only if
    with_20_only."""
    out = []
    in4 = False
    for line in open(path):
        if line.startswith("## 4."):
            in4 = True
            continue
        if line.startswith("## ") and in4:
            break
        if not in4:
            continue
        m = re.match(r"\| (DAT_\w+)( \(2\.0 only[^)]*\))? \| (\d+) \| (\d+) \|", line)
        if m and (with_20_only or not m.group(2)):
            out.append((m.group(1), int(m.group(3)), int(m.group(4))))
    return out


def parse_functions(path):
    """The C signature of every row of a function list table."""
    out = []
    for line in open(path):
        m = re.match(r"^\| \d+ \| `(DAT_RETURN (\w+)\(.*\))` \|", line)
        if m:
            out.append((m.group(2), m.group(1)))
    return out


# --------------------------------------------------------------------------
# C output
# --------------------------------------------------------------------------

C_HEAD_BY_FACE = {
    "1.2": """\
/*
 * abi_checks.c - GENERATED by tests/abi/gen_checks.py from the DAT reference
 * facts (layout-dat12-ofed-x86_64.txt, constants.md).  Do not edit; rerun
 * the generator instead.
 *
 * Compile-time checks of the DAT 1.2 headers against the OFED compat-dapl
 * ABI on x86_64: struct/union sizes, alignments, member offsets, member
 * sizes and member types, enumerated type sizes, scalar type sizes and
 * constant values.  Builds as C11 and as C++11; the program then runs the
 * few checks that cannot be constant expressions (pointer-valued macros).
 */
""",
    "2.0": """\
/*
 * abi_checks_dat2.c - GENERATED by tests/abi/gen_checks.py --face 20 from the
 * DAT reference facts (layout-dat20-ofed-x86_64.txt, constants.md).  Do not
 * edit; rerun the generator instead.
 *
 * Compile-time checks of the DAT 2.0 headers against the OFED dapl 2.x ABI
 * on x86_64: struct/union sizes, alignments, member offsets, member sizes
 * and member types, enumerated type sizes (also of the IB extension enums),
 * scalar type sizes and constant values.  Builds as C11 and as C++11; the
 * program then runs the few checks that cannot be constant expressions
 * (pointer-valued macros).
 */
""",
}

C_BODY_HEAD = """\

#include <stdio.h>
#include <stddef.h>

#if defined(__cplusplus)
#include <type_traits>
#define CHECK(cond, msg)        static_assert(cond, msg)
#define ALIGNOF(t)              alignof(t)
/* cv-qualifiers are ignored in C++: udat.h drops one const for C++ */
#define SAME_TYPE(expr, t)      (std::is_same<std::remove_cv<std::remove_reference<decltype(expr)>::type>::type, \\
                                              std::remove_cv<t>::type>::value)
#elif defined(__GNUC__)
#define CHECK(cond, msg)        _Static_assert(cond, msg)
#define ALIGNOF(t)              _Alignof(t)
#define SAME_TYPE(expr, t)      __builtin_types_compatible_p(__typeof__(expr), t)
#else
#define CHECK(cond, msg)        _Static_assert(cond, msg)
#define ALIGNOF(t)              _Alignof(t)
#define SAME_TYPE(expr, t)      1
#endif

#define MEMBER(rec, path)       (((rec *)0)->path)

"""


def c_output(face, records, consts, scalars):
    out = [C_HEAD_BY_FACE[face.name]]
    out += ["#include <%s/%s>\n" % (face.include_dir, h) for h in face.headers]
    out.append(C_BODY_HEAD)
    n = 0
    unnamed_sizes = dict((r.kind + " " + r.tag, r.size) for r in records if r.unnamed)
    records = [r for r in records if not r.unnamed]
    out.append("/* ---- struct and union layouts (%d records) ---- */\n" % len(records))
    for r in records:
        rec = "%s %s" % (r.kind, r.tag)
        out.append("\n/* %s */\n" % rec)
        out.append('CHECK(sizeof(%s) == %d, "sizeof(%s)");\n' % (rec, r.size, rec))
        out.append('CHECK(ALIGNOF(%s) == %d, "alignof(%s)");\n' % (rec, r.align, rec))
        n += 2
        for f in r.fields:
            p = ".".join(f.path)
            out.append('CHECK(offsetof(%s, %s) == %d, "offsetof(%s, %s)");\n' % (rec, p, f.offset, rec, p))
            n += 1
            if f.ctype in unnamed_sizes:
                # a member of an unnamed union type: its type cannot be spelled
                out.append('CHECK(sizeof(MEMBER(%s, %s)) == %d, "sizeof(%s.%s)");\n'
                           % (rec, p, unnamed_sizes[f.ctype], rec, p))
                n += 1
                continue
            out.append('CHECK(sizeof(MEMBER(%s, %s)) == sizeof(%s), "sizeof(%s.%s)");\n' % (rec, p, f.ctype, rec, p))
            out.append('CHECK(SAME_TYPE(MEMBER(%s, %s), %s), "type of %s.%s");\n' % (rec, p, f.ctype, rec, p))
            n += 2
    out.append("\n/* ---- scalar types (constants.md section 4) ---- */\n")
    for t, size, align in scalars:
        out.append('CHECK(sizeof(%s) == %d, "sizeof(%s)");\n' % (t, size, t))
        out.append('CHECK(ALIGNOF(%s) == %d, "alignof(%s)");\n' % (t, align, t))
        n += 2
    enums = []
    for sec, _, _ in consts:
        if sec != "#define" and sec not in enums:
            enums.append(sec)
    out.append("\n/* ---- enumerated types are 4 bytes ---- */\n")
    for e in enums:
        out.append('CHECK(sizeof(%s) == 4, "sizeof(%s)");\n' % (e, e))
        n += 1
    column = {"1.2": "1.2 OFED compat-dapl column", "2.0": "2.0 OFED column and IB extension enums"}[face.name]
    out.append("\n/* ---- constant values, %s ---- */\n" % column)
    runtime = []
    for sec, name, val in consts:
        if name in POINTER_CONSTS:
            runtime.append((name, val))
            continue
        out.append('CHECK((unsigned long long)(%s) == 0x%xULL, "%s (%s)");\n' % (name, val, name, sec))
        n += 1
    for name, val in EXTRA_POINTER_CONSTS:
        if name not in [r[0] for r in runtime]:
            runtime.append((name, val))
    out.append("\n/* ---- run-time checks ---- */\n")
    out.append("static int failures;\nstatic int passed;\n\n")
    out.append("static void rt(int ok, const char *what)\n{\n"
               "    if (ok) {\n        passed++;\n    } else {\n"
               "        failures++;\n        printf(\"FAIL %s\\n\", what);\n    }\n}\n\n")
    out.append("int main(void)\n{\n")
    for name, val in runtime:
        out.append('    rt((unsigned long long)(size_t)(%s) == 0x%xULL, "%s");\n' % (name, val, name))
    out.append("    {\n        DAT_OS_WAIT_PROXY_AGENT a = DAT_OS_WAIT_PROXY_AGENT_NULL;\n"
               "        rt(a.instance_data == NULL && a.proxy_agent_func == NULL, \"DAT_OS_WAIT_PROXY_AGENT_NULL\");\n    }\n")
    nrt = len(runtime) + 1
    out.append('    printf("abi_checks: %d compile-time checks passed, %%d/%d run-time checks passed\\n", passed);\n'
               % (n, nrt))
    out.append("    return failures != 0;\n}\n")
    return "".join(out), n, nrt


# --------------------------------------------------------------------------
# Rust output
# --------------------------------------------------------------------------

def rust_type(ctype):
    t = ctype.strip()
    m = re.match(r"^(struct|union) (\w+)$", t)
    if m:
        return m.group(2).upper()
    if t == "const char *":
        return "*const c_char"
    if t == "int":
        return "c_int"
    m = re.match(r"^(const )?(\w+) \*$", t)
    if m:
        return ("*const %s" if m.group(1) else "*mut %s") % rust_type(m.group(2))
    m = re.match(r"^(const )?(\w+)((\[\d+\])+)$", t)
    if m:
        inner = "c_char" if m.group(2) == "char" else m.group(2)
        for d in reversed(re.findall(r"\[(\d+)\]", m.group(3))):
            inner = "[%s; %s]" % (inner, d)
        return inner
    if re.match(r"^DAT_\w+$", t):
        return t
    raise ValueError("no Rust type for %r" % ctype)


RS_ABI_NAME = {"1.2": "DAT 1.2 OFED compat-dapl", "2.0": "DAT 2.0 OFED"}


RUST_KEYWORDS = {"type", "fn", "struct", "union", "match", "move", "ref", "self"}


def rust_path(path):
    """A member path as Rust spells it (keywords as raw identifiers: DAT_COMM.type)."""
    return ".".join("r#" + p if p in RUST_KEYWORDS else p for p in path)


def unnamed_rust_names(records):
    """Rust names for unnamed member types: `union outer::(unnamed at ...)` used as member
    `m` of `outer` is `OUTER_M` (e.g. DAT_CNO_PARAM_PROXY)."""
    names = {}
    for r in records:
        for f in r.fields:
            if "(unnamed" in f.ctype and f.ctype not in names:
                names[f.ctype] = "%s_%s" % (r.tag.upper(), "_".join(f.path).upper())
    return names


def rs_output(face, records, consts, scalars):
    out = []
    unnamed = unnamed_rust_names(records)
    uses_int = any(f.ctype == "int" for r in records for f in r.fields)
    flag = "" if face.name == "1.2" else " --face 20"
    out.append("// GENERATED by tests/abi/gen_checks.py%s from the DAT reference facts\n"
               "// (%s, constants.md). Do not edit; rerun the generator.\n"
               "//\n"
               "// Layout, field-type and constant checks of the Rust mirrors in abi.rs against\n"
               "// the %s ABI on x86_64.\n\n" % (flag, face.layout, RS_ABI_NAME[face.name]))
    out.append("#![allow(clippy::all, unused_unsafe)]\n\n"
               "use super::*;\n"
               "use libc::%s;\n"
               "use std::mem::{align_of, offset_of, size_of};\n\n"
               "fn field_size<S, F>(_: fn(&S) -> &F) -> usize {\n    size_of::<F>()\n}\n")
    out[-1] = out[-1] % ("{c_char, c_int}" if uses_int else "c_char")
    n = 0
    for r in records:
        name = unnamed.get("%s %s" % (r.kind, r.tag), r.tag.upper())
        out.append("\n#[test]\nfn layout_%s() {\n" % name.lower())
        out.append("    assert_eq!(size_of::<%s>(), %d, \"sizeof %s\");\n" % (name, r.size, name))
        out.append("    assert_eq!(align_of::<%s>(), %d, \"alignof %s\");\n" % (name, r.align, name))
        n += 2
        for f in r.fields:
            p = ".".join(f.path)
            rp = rust_path(f.path)
            rt = unnamed.get(f.ctype) or rust_type(f.ctype)
            acc = "unsafe { &s.%s }" % rp if f.via_union else "&s.%s" % rp
            out.append("    assert_eq!(offset_of!(%s, %s), %d, \"offsetof %s.%s\");\n" % (name, rp, f.offset, name, p))
            out.append("    assert_eq!(field_size::<%s, %s>(|s| %s), size_of::<%s>(), \"type of %s.%s\");\n"
                       % (name, rt, acc, rt, name, p))
            n += 2
        out.append("}\n")
    out.append("\n#[test]\nfn scalar_type_sizes() {\n")
    for t, size, align in scalars:
        out.append("    assert_eq!((size_of::<%s>(), align_of::<%s>()), (%d, %d), \"%s\");\n" % (t, t, size, align, t))
        n += 1
    out.append("}\n")
    enums = []
    for sec, _, _ in consts:
        if sec != "#define" and sec not in enums:
            enums.append(sec)
    out.append("\n#[test]\nfn enum_type_sizes() {\n")
    for e in enums:
        out.append("    assert_eq!(size_of::<%s>(), 4, \"%s\");\n" % (e, e))
        n += 1
    out.append("}\n")
    out.append("\n#[test]\n#[allow(clippy::unnecessary_cast)]\nfn constant_values() {\n")
    for sec, name, val in consts:
        conv = "%s as usize as u64" % name if name in POINTER_CONSTS else "%s as u64" % name
        out.append("    assert_eq!(%s, 0x%x, \"%s\");\n" % (conv, val, name))
        n += 1
    for name, val in EXTRA_POINTER_CONSTS:
        if name not in [c[1] for c in consts]:
            out.append("    assert_eq!(%s as usize as u64, 0x%x, \"%s\");\n" % (name, val, name))
            n += 1
    out.append("}\n")
    return "".join(out), n


# --------------------------------------------------------------------------
# prototype output
# --------------------------------------------------------------------------

PROTO_HEAD = """\
/*
 * %(file)s - GENERATED by tests/abi/gen_checks.py%(flag)s from the DAT
 * reference facts (%(functions)s).  Do not edit; rerun the generator
 * instead.
 *
 * Every function of the DAT %(face)s function list, declared again exactly
 * as the list spells it (the signatures of OFED's definitions).  C requires
 * a redeclaration to be compatible with the header's prototype, so the file
 * compiles only if our <%(dir)s/...> headers declare each function with the
 * same parameter and return types.  The __typeof__ line before each
 * declaration fails if the headers do not declare the function at all.
 * Compile as C (C99, C11), not C++: C++ would take a differing declaration
 * for an overload.
 */
"""


def proto_output(face, functions):
    name = os.path.basename(face.out_proto)
    flag = "" if face.name == "1.2" else " --face 20"
    out = [PROTO_HEAD % {"file": name, "flag": flag, "functions": face.functions, "face": face.name,
                         "dir": face.include_dir}]
    out += ["#include <%s/%s>\n" % (face.include_dir, h) for h in face.headers]
    for fn, sig in functions:
        out.append("\nextern __typeof__(%s) %s;\n%s;\n" % (fn, fn, sig))
    out.append("\ntypedef int prototypes_checked_%d;\n" % len(functions))
    return "".join(out)


# --------------------------------------------------------------------------

def main(argv):
    args = list(argv[1:])
    if not args or args[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    ref = args.pop(0)
    face_key = "12"
    outs = {}
    while args:
        a = args.pop(0)
        if a in ("--face", "--c", "--rs", "--proto") and args:
            value = args.pop(0)
            if a == "--face":
                face_key = value
            else:
                outs[a] = value
        else:
            sys.stderr.write("unknown argument %s\n" % a)
            return 2
    if face_key not in FACES:
        sys.stderr.write("unknown face %s (12 or 20)\n" % face_key)
        return 2
    face = FACES[face_key]
    out_c = outs.get("--c", os.path.join(ROOT, face.out_c))
    out_proto = outs.get("--proto", os.path.join(ROOT, face.out_proto))
    constants = os.path.join(ref, "constants.md")
    records = parse_layout(os.path.join(ref, face.layout))
    consts = parse_constants(constants, face.column, face.name == "2.0")
    scalars = parse_scalar_sizes(constants, face.name == "2.0")
    functions = parse_functions(os.path.join(ref, face.functions))
    c_text, nc, nrt = c_output(face, records, consts, scalars)
    with open(out_c, "w") as f:
        f.write(c_text)
    with open(out_proto, "w") as f:
        f.write(proto_output(face, functions))
    nfields = sum(len(r.fields) for r in records)
    print("gen_checks: DAT %s: %d records, %d member lines, %d constants, %d scalar types, %d functions"
          % (face.name, len(records), nfields, len(consts), len(scalars), len(functions)))
    print("gen_checks: %s: %d compile-time + %d run-time checks" % (os.path.relpath(out_c, ROOT), nc, nrt))
    print("gen_checks: %s: %d prototypes" % (os.path.relpath(out_proto, ROOT), len(functions)))
    if face.out_rs:
        out_rs = outs.get("--rs", os.path.join(ROOT, face.out_rs))
        rs_text, nrs = rs_output(face, records, consts, scalars)
        with open(out_rs, "w") as f:
            f.write(rs_text)
        print("gen_checks: %s: %d assertions" % (os.path.relpath(out_rs, ROOT), nrs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
