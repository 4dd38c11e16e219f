"""How a Python program runs in its test's fork of the launcher (launcher.py), and how it ends: as
`python3 prog.py` ends it. Shipped into the sandbox beside the launcher (boot.py); stdlib only.

The launcher's interpreter starts with -S, so `site` does not run (a program imports the standard
library alone, the same on every host), and a test's fork leaves by os._exit (tearing down the
program's objects would be paid by every test). What the interpreter does at the end of a program
is therefore done here, in the order of CPython 3.11's Py_FinalizeEx (Python/pylifecycle.c):

1. non-daemon threads are joined (`threading._shutdown`, when the program imported threading);
2. atexit handlers run (`atexit._run_exitfuncs`, the same call);
3. sys.stdout and sys.stderr are flushed unless closed; a flush that fails makes the status 120;
4. the original streams, sys.__stdout__ and sys.__stderr__, which CPython's module teardown puts
   back as sys.stdout and sys.stderr and flushes (status 120 on failure).

The teardown itself, which would also close (and so flush) every other file object still alive, is
not run. docs/sandbox.md ("Python programs") lists what still differs from python3, and why.
"""

import builtins
import gc
import os
import sys

FLUSH_FAILED = 120  # CPython's exit status when the standard streams cannot be flushed at exit


def install_site_builtins():
    """exit, quit, copyright, credits, license and help, made by site's own functions (-S skips
    them); site.main(), which would put the host's site-packages on sys.path, is not run. Once,
    in the launcher: no test pays for it."""
    import site

    site.setquit()
    site.setcopyright()
    site.sethelper()


def program_stdio():
    """The program's standard streams, made once in the launcher (each object a test's fork makes
    costs it page faults) as python3 makes them: UTF-8, stdin and stdout with surrogateescape,
    stderr line-buffered with backslashreplace. They also become this process's sys.std* and
    sys.__std*__ (it never writes through them), so a fork need not rebind them."""
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = _open_stdio()


START_RECURSION_LIMIT = sys.getrecursionlimit()


def program_module(prelude=None):
    """The module the program runs as, made here for each program and registered as
    sys.modules["__main__"], as python3 runs a script (`import __main__` and pickling the program's
    functions, as multiprocessing's pools do, find its names). Each test's fork fills its own copy;
    this process runs in the namespace BOOT gave it and never imports __main__.

    `prelude`: compiled code of the host's (LiveCodeBench's imports, star-imports and recursion
    limit), run once here in the module, as if it were the program's first lines: each test's fork
    then finds its modules imported and its names bound, where importing 17 modules in every fork
    cost more than the test (the fork's own copy of `random` reseeds itself). Never the program."""
    module = sys.modules["__main__"] = type(sys)("__main__")
    module.__builtins__ = builtins
    sys.setrecursionlimit(START_RECURSION_LIMIT)  # a prelude's limit is its own program's only
    if prelude is not None:
        exec(prelude, module.__dict__)


def _open_stdio():
    return (
        open(0, encoding="utf-8", errors="surrogateescape", closefd=False),
        open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False),
        open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False),
    )


def run_program(code, args=()):
    """Run the compiled program as __main__, end it as python3 does, leave with its status."""
    gc.enable()  # the program runs with the usual collector
    sys.argv = ["solution.py", *args]
    namespace = sys.modules["__main__"].__dict__  # the program's module (program_stdio)
    status = finish(_status_of(code, namespace))
    os._exit(status & 0xFF)


def _status_of(code, namespace):
    """Run the program; its exit status as python3's handling of SystemExit and errors gives it."""
    try:
        exec(code, namespace)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        _quietly(print, exc.code, file=sys.stderr)
        return 1
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # hide this module's frame
        _quietly(sys.excepthook, type(exc), exc.with_traceback(tb), tb)  # by default the interpreter's C report
        return 1
    return 0


def finish(status):
    """What Py_FinalizeEx does after the program (module docstring); the final status. Each
    object of the launcher this touches costs the test a copy-on-write fault: kept to a few."""
    modules = sys.modules
    if "threading" in modules:
        _reported(modules["threading"]._shutdown, modules["threading"])
    if "atexit" in modules:
        _reported(modules["atexit"]._run_exitfuncs, modules["atexit"])
    out, err = sys.stdout, sys.stderr
    ok = _flushed(out, True) & _flushed(err, False)
    original_out, original_err = sys.__stdout__, sys.__stderr__
    if original_out is not out:
        ok &= _flushed(original_out, True)
    if original_err is not err:
        ok &= _flushed(original_err, False)
    return status if ok else FLUSH_FAILED


def _flushed(stream, report):
    """False when the stream could not be flushed; a missing or closed one is skipped, as in
    CPython's flush_std_files (which asks `closed` first: here only when the flush failed)."""
    try:
        stream.flush()
    except Exception:
        try:
            if stream is None or stream.closed:
                return True
        except Exception:  # no `closed`: CPython would have tried the flush
            pass
        if report:
            _quietly(_unraisable, stream)
        return False
    return True


def _reported(step, owner):
    try:
        step()
    except BaseException:
        _quietly(_unraisable, owner)


def _unraisable(obj):
    """CPython's "Exception ignored in" report, on sys.stderr."""
    exc = sys.exc_info()[1]
    print(f"Exception ignored in: {obj!r}", file=sys.stderr)
    sys.__excepthook__(type(exc), exc, exc.__traceback__)


def _quietly(report, *args, **kw):
    """A report that cannot be written (stderr closed or gone) is dropped, as CPython drops it."""
    try:
        report(*args, **kw)
    except Exception:
        pass
