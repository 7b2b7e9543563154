#!/usr/bin/env python3
"""Generate the DAT 1.2 ABI checks from the reference fact files.

usage: gen_checks.py REFERENCE_DIR [--c OUT.c] [--rs OUT.rs]

REFERENCE_DIR holds layout-dat12-ofed-x86_64.txt and constants.md.
Defaults for the outputs (relative to the repository root, found from this
script's location):
    tests/abi/abi_checks.c                  C11 / C++11 compile-time checks
                                            (plus a few run-time ones)
    crates/dat12/src/abi_layout_tests.rs    the same facts as Rust unit tests

What is checked:
  * every struct/union of the layout dump: sizeof, alignment, and for every
    (also nested) member its offset, its size and its declared type;
  * every constant of constants.md section 5 that has a value in the
    "1.2 OFED compat-dapl" column (enumerators and integer #defines);
  * the size of every enumerated type of that section (4 bytes);
  * the scalar type sizes/alignments of constants.md section 4 (1.2 rows).

Both outputs are committed: a clone of the repository has no reference dir.
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

class Field:
    def __init__(self, offset, ctype, path, via_union):
        self.offset = offset
        self.ctype = ctype          # type as printed in the layout dump
        self.path = path            # list of member names from the record
        self.via_union = via_union  # True if any container on the path is a union


class Record:
    def __init__(self, kind, tag):
        self.kind = kind            # "struct" or "union"
        self.tag = tag              # e.g. dat_ep_attr
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
            kind, tag = text.split()
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


def parse_constants(path):
    """Section 5 rows with a value in the 1.2 OFED column:
    list of (section, name, value) where section is an enum type name or
    '#define'."""
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
        m = re.match(r"\| (DAT_\w+) \| (\S+) \|", line)
        if m and sec:
            v = m.group(2)
            if not v.startswith("0x"):
                continue  # not defined in 1.2 OFED
            out.append((sec, m.group(1), int(v, 16)))
    return out


def parse_scalar_sizes(path):
    """Section 4 rows: (type, size, align), 1.2 types only."""
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
        m = re.match(r"\| (DAT_\w+) \| (\d+) \| (\d+) \|", line)
        if m:
            out.append((m.group(1), int(m.group(2)), int(m.group(3))))
    return out


# --------------------------------------------------------------------------
# C output
# --------------------------------------------------------------------------

C_HEAD = """\
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
#include <dat/udat.h>
#include <dat/dat_registry.h>

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


def c_output(records, consts, scalars):
    out = [C_HEAD]
    n = 0
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
            out.append('CHECK(sizeof(MEMBER(%s, %s)) == sizeof(%s), "sizeof(%s.%s)");\n' % (rec, p, f.ctype, rec, p))
            out.append('CHECK(SAME_TYPE(MEMBER(%s, %s), %s), "type of %s.%s");\n' % (rec, p, f.ctype, rec, p))
            n += 3
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
    out.append("\n/* ---- constant values, 1.2 OFED compat-dapl column ---- */\n")
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


def rs_output(records, consts, scalars):
    out = []
    out.append("// GENERATED by tests/abi/gen_checks.py from the DAT reference facts\n"
               "// (layout-dat12-ofed-x86_64.txt, constants.md). Do not edit; rerun the generator.\n"
               "//\n"
               "// Layout, field-type and constant checks of the Rust mirrors in abi.rs against\n"
               "// the DAT 1.2 OFED compat-dapl ABI on x86_64.\n\n"
               "#![allow(clippy::all, unused_unsafe)]\n\n"
               "use super::*;\n"
               "use libc::c_char;\n"
               "use std::mem::{align_of, offset_of, size_of};\n\n"
               "fn field_size<S, F>(_: fn(&S) -> &F) -> usize {\n    size_of::<F>()\n}\n")
    n = 0
    for r in records:
        name = r.tag.upper()
        out.append("\n#[test]\nfn layout_%s() {\n" % r.tag)
        out.append("    assert_eq!(size_of::<%s>(), %d, \"sizeof %s\");\n" % (name, r.size, name))
        out.append("    assert_eq!(align_of::<%s>(), %d, \"alignof %s\");\n" % (name, r.align, name))
        n += 2
        for f in r.fields:
            p = ".".join(f.path)
            rt = rust_type(f.ctype)
            acc = "unsafe { &s.%s }" % p if f.via_union else "&s.%s" % p
            out.append("    assert_eq!(offset_of!(%s, %s), %d, \"offsetof %s.%s\");\n" % (name, p, f.offset, name, p))
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

def main(argv):
    args = list(argv[1:])
    if not args or args[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    ref = args.pop(0)
    out_c = os.path.join(ROOT, "tests", "abi", "abi_checks.c")
    out_rs = os.path.join(ROOT, "crates", "dat12", "src", "abi_layout_tests.rs")
    while args:
        a = args.pop(0)
        if a == "--c":
            out_c = args.pop(0)
        elif a == "--rs":
            out_rs = args.pop(0)
        else:
            sys.stderr.write("unknown argument %s\n" % a)
            return 2
    records = parse_layout(os.path.join(ref, "layout-dat12-ofed-x86_64.txt"))
    consts = parse_constants(os.path.join(ref, "constants.md"))
    scalars = parse_scalar_sizes(os.path.join(ref, "constants.md"))
    c_text, nc, nrt = c_output(records, consts, scalars)
    rs_text, nrs = rs_output(records, consts, scalars)
    with open(out_c, "w") as f:
        f.write(c_text)
    with open(out_rs, "w") as f:
        f.write(rs_text)
    nfields = sum(len(r.fields) for r in records)
    print("gen_checks: %d records, %d member lines, %d constants, %d scalar types"
          % (len(records), nfields, len(consts), len(scalars)))
    print("gen_checks: %s: %d compile-time + %d run-time checks" % (os.path.relpath(out_c, ROOT), nc, nrt))
    print("gen_checks: %s: %d assertions" % (os.path.relpath(out_rs, ROOT), nrs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
