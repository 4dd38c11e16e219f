"""The launcher's work folder (launcher.py): where a test's input is staged, what a test may
leave there and how it is cleared, and the sealed image a compiled program runs from. Shipped into
the sandbox beside the launcher (boot.py); stdlib only.
"""

import fcntl
import os
import sys

WORK = sys.argv[1] if len(sys.argv) > 1 else "/work"
RUN_DIR = os.path.join(WORK, "run")
IO_DIR = os.path.join(WORK, ".io")
IO_PATHS = tuple(os.path.join(IO_DIR, name) for name in ("stdin", "stdout", "stderr"))
FOLDER_MODES = {}  # set at start: the work, .io and run folders' modes as made
IO_NAMES = {"stdin", "stdout", "stderr"}
OWN_FILES = {"run", ".io", "prog", "prog.cpp"}  # and headers a load writes beside prog.cpp
LEFT_CLEAN = False  # True: nothing has run since clear_leftovers() last finished
INPUT_BUFFER = bytearray(1 << 16)  # allocated once, before any test: a test's peak never sees it


def stage(stdin_data, files=None, keep_dir=False):
    """Put the test's input in place before the host takes its memory baseline."""
    if not keep_dir:
        clear_leftovers()
    mark_used()
    for name, content in (files or {}).items():
        with open(os.path.join(RUN_DIR, os.path.basename(name)), "w") as f:
            f.write(content)
    with open(os.path.join(IO_DIR, "stdin"), "w") as f:
        f.write(stdin_data)
    return {"ok": True}


def clear_leftovers():
    """Nothing a program leaves passes to the next test: files beside the launcher's own in the
    work folder and .io go, folders it made unwritable are made writable again (it runs as our
    uid), and the run folder is made afresh unless it was left empty and as made (then a stat and
    a listdir replace a rmdir and a mkdir)."""
    global LEFT_CLEAN
    for folder, keep in ((WORK, OWN_FILES), (IO_DIR, IO_NAMES)):
        if os.lstat(folder).st_mode != FOLDER_MODES[folder]:
            os.chmod(folder, FOLDER_MODES[folder] & 0o7777)
        for name in set(os.listdir(folder)) - keep:
            remove(os.path.join(folder, name))
    try:
        if os.lstat(RUN_DIR).st_mode == FOLDER_MODES[RUN_DIR] and not os.listdir(RUN_DIR):
            LEFT_CLEAN = True
            return
    except OSError:  # removed or made unreadable by the last program
        pass
    remove(RUN_DIR)
    os.makedirs(RUN_DIR, exist_ok=True)
    LEFT_CLEAN = True


def remove(path):
    """A file, a link, or a folder tree whose folders the program may have made unwritable."""
    if os.path.islink(path) or not os.path.isdir(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    import shutil  # only when a program left a folder: kept out of every test's fork

    for folder in [path] + [os.path.join(root, name) for root, dirs, _ in os.walk(path) for name in dirs]:
        if not os.path.islink(folder):
            try:
                os.chmod(folder, 0o700)
            except OSError:
                pass
    shutil.rmtree(path, ignore_errors=True)


def mark_used():
    """Something ran in the folder: the next test clears it first."""
    global LEFT_CLEAN
    LEFT_CLEAN = False


def stage_raw(size, source_fd):
    """The `test` op's input: `size` raw bytes from the host (`source_fd`) straight into the stdin file (the
    leftovers were cleared after the last test; this only repeats it if that failed). Every byte
    is read even when the file cannot take them (a full tmpfs), so the pipe stays in step."""
    view, fd, error = memoryview(INPUT_BUFFER), None, None
    try:
        if not LEFT_CLEAN:
            clear_leftovers()
        fd = os.open(IO_PATHS[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        error = exc
    while size:
        got = os.readv(source_fd, [view[: min(size, len(view))]])
        if not got:
            raise EOFError("the host closed the pipe mid-input")
        size -= got
        written = 0
        while fd is not None and written < got:
            try:
                written += os.write(fd, view[written:got])
            except OSError as exc:
                os.close(fd)
                fd, error = None, exc
    if fd is not None:
        os.close(fd)
    if error:
        raise error


def free_io(stdout=True, stderr=True):
    """Empty the output files (an empty one is left alone: a truncate is a path walk)."""
    for path, used in zip(IO_PATHS[1:], (stdout, stderr), strict=True):
        if used:
            os.truncate(path, 0)


def sealed_image(path):
    """The compiled binary copied into a sealed memfd, then removed from the work folder: the
    program runs as our uid and could rewrite a file there, so that a later test of the same
    submission would run another program. A sealed memfd cannot be written by anyone."""
    fd = os.memfd_create("prog", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    with open(path, "rb") as f:
        data = memoryview(f.read())
    while data:
        data = data[os.write(fd, data) :]
    seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    os.unlink(path)
    return fd
