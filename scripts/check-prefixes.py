#!/usr/bin/env python3
"""scripts/check-prefixes.py [--source DIR] PATH...: fails when an external
symbol of a layer does not carry that layer's prefix (style.md #2).

Each PATH is a static library (thin or not) or an object directory
(<target>.p of an executable or shared library).  Every object's external
definitions (`nm -g --defined-only`) are checked against the prefixes of
the layer its object was compiled for: the folder that holds the object's
target (build/ir/libpw_ir.a.p/ir_parse.c.o is ir's, wherever it is
archived):

  util pw_   ir ir_   ptx ptx_   lower lower_ opt_   codegen cg_   emu emu_
  runtime rt_ (internals), cu* (libcuda's exports keep CUDA's names),
          nvml* (libnvidia-ml's keep NVML's)
  convert cv_   tools cmd_ (and main)
  forward fw_ (internals), cublas* cudnn* (the entry points it takes over)

The names are the exported ones only: static functions and header-only
names (types, macros) are not symbols.  In C++ objects, weak and unique
definitions are instances of templates and inline functions of the headers
(std::, llvm::) and are not ours; the strong ones are checked by their
unqualified name.  In an object directory, an object whose source is gone
(left by an earlier build) is skipped: --source names the source root.
Run by the test `prefixes` (tests/meson.build); exit status 1 lists every
offending name with its object."""
import os, re, subprocess, sys

PREFIXES = {
    'util': ('pw_',),
    'ir': ('ir_',),
    'ptx': ('ptx_',),
    'lower': ('lower_', 'opt_'),
    'codegen': ('cg_',),
    'emu': ('emu_',),
    'runtime': ('rt_', re.compile(r'cu[A-Z]'), re.compile(r'nvml[A-Z]')),
    'convert': ('cv_',),
    'tools': ('cmd_', re.compile(r'main$')),
    'forward': ('fw_', re.compile(r'cublas[A-Z]'), re.compile(r'cudnn[A-Z]')),
}

def layer_of(obj):
    """The layer an object was compiled for: the folder holding its target's
    .p directory (build/ir/libpw_ir.a.p/ir_parse.c.o -> ir)."""
    return os.path.basename(os.path.dirname(os.path.dirname(os.path.normpath(obj))))

def allowed(layer, name):
    for p in PREFIXES[layer]:
        if isinstance(p, str) and name.startswith(p):
            return True
        if not isinstance(p, str) and p.match(name):
            return True
    return False

def unqualified(demangled):
    """cg_llvm_applied_options[abi:cxx11]() -> cg_llvm_applied_options;
    ns::f(int) -> f."""
    base = demangled.split('(')[0].split('[')[0]
    return base.split('::')[-1].strip()

def symbols(path):
    """(object, type, name) of each external definition in path; an
    archive's members are named by their paths."""
    out = subprocess.run(['nm', '-A', '-g', '--defined-only', '-C', path],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        # archive:member:addr type name  |  object:addr type name
        m = re.match(r'(?:(.*?\.a):)?(.*?):([0-9a-fA-F]*) (\S) (.*)$', line)
        if m:
            yield m.group(2), m.group(4), m.group(5)

def objects_of(path, source):
    """An archive as it is; an object directory's objects, less those whose
    source file is gone (tools/ptxwave.p/cmd_ir.c.o: tools/cmd_ir.c)."""
    if not os.path.isdir(path):
        return [path]
    layer = os.path.basename(os.path.dirname(os.path.normpath(path)))
    return [os.path.join(path, f) for f in sorted(os.listdir(path))
            if f.endswith('.o') and (not source or os.path.exists(os.path.join(source, layer, f[:-2])))]

def check(path, source, bad):
    for o in objects_of(os.path.abspath(path), source):
        for obj, typ, name in symbols(o):
            layer = layer_of(obj)
            if layer not in PREFIXES:
                continue
            cxx = obj.endswith(('.cpp.o', '.cc.o'))
            if cxx and typ in 'WVu':
                continue
            # the sanitizers' own symbols (ASan's __odr_asan.<global>
            # markers in an -fsanitize=address build) are not ours
            if name.startswith(('__odr_asan', '__asan', '__ubsan', '__tsan', '__sancov')):
                continue
            if not allowed(layer, unqualified(name) if cxx else name):
                want = ' '.join(p if isinstance(p, str) else p.pattern.rstrip('$') for p in PREFIXES[layer])
                line = f'{os.path.normpath(obj)}: {name} (layer {layer}: {want})'
                if line not in bad:   # an object can sit in several archives
                    bad.append(line)

def main(argv):
    source = None
    if len(argv) > 2 and argv[1] == '--source':
        source, argv = argv[2], argv[:1] + argv[3:]
    bad = []
    for path in argv[1:]:
        check(path, source, bad)
    for b in bad:
        print(b)
    if bad:
        print(f'{len(bad)} external name(s) without their layer\'s prefix (style.md #2)')
        return 1
    print(f'prefixes: {len(argv) - 1} libraries and object directories checked')
    return 0

sys.exit(main(sys.argv))
