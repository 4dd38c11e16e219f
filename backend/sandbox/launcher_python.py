"""How a Python program runs in its test's fork of the launcher (launcher.py), and how it ends: as
`python3 prog.py` ends it. Shipped into the sandbox beside the launcher (boot.py); stdlib only.

The launcher's interpreter starts with -S, so `site` does not run (a program imports the standard
library alone, the same on every host), and a test's fork leaves by os._exit (tearing down the
program's objects would be paid by every test). What the interpreter does at the end of a program
is therefore done here, in the order of CPython 3.11's Py_FinalizeEx (Python/pylifecycle.c):

1. non-daemon threads are joined (`threading._shutdown`, when the program imported threading);
2. atexit handlers run (`atexit._run_exitfuncs`, the same call);
3. sys.stdout and sys.stderr are flushed unless closed; a flush that fails makes the status 120;
4. what the module teardown would flush: the io objects bound in the program's globals, then the
   original streams, sys.__stdout__ and sys.__stderr__ (status 120 on failure, as in CPython).

docs/sandbox.md ("Python programs") lists what still differs from python3, and why.
"""

import _io
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
    # a module of its own as sys.modules["__main__"], as python3 runs a script: `import __main__`
    # and pickling a function of the program (multiprocessing's pools) find the program's names
    main = sys.modules["__main__"] = type(sys)("__main__")
    main.__builtins__ = builtins
    status = finish(main.__dict__, _status_of(code, main.__dict__))
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


def finish(namespace, status):
    """What Py_FinalizeEx does after the program (module docstring); the final status."""
    threading = sys.modules.get("threading")
    if threading is not None:
        _reported(threading._shutdown, threading)
    atexit = sys.modules.get("atexit")
    if atexit is not None:
        _reported(atexit._run_exitfuncs, atexit)
    ok = _flushed(sys.stdout, report=True) & _flushed(sys.stderr)
    out, err = sys.__stdout__, sys.__stderr__
    for value in tuple(namespace.values()):
        if isinstance(value, _io._IOBase) and value is not out and value is not err:
            _flushed(value)  # the teardown closes it; a failure there is silent
    ok &= _flushed(out, report=True) & _flushed(err)
    return status if ok else FLUSH_FAILED


def _flushed(stream, report=False):
    """Flush unless missing or closed; False when the flush failed (CPython's flush_std_files)."""
    if stream is None:
        return True
    try:
        if stream.closed:
            return True
    except Exception:  # no `closed`: CPython tries the flush
        pass
    try:
        stream.flush()
    except Exception:
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
