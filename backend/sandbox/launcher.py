"""The warm fork server that runs *inside* the sandbox (bwrap, docker or none).

Stdlib only (and its three helpers, launcher_files.py, launcher_limits.py and launcher_python.py,
shipped with it), started once per program as
`python3 -I -S -c BOOT WORKDIR [--pid1] [--cpu-counter FD|PATH:v1|v2]` (boot.py), which reads the
four sources from the pipe first. It speaks length-prefixed JSON on
fds 0/1 with the host:

    {"op": "load", "language": "python"|"cpp"|"binary", ...}    -> {"ok", "error"[, "binary_b64"]}
    {"op": "stage", "input": ..., "files": {...}, "keep_dir"}   -> {"ok"}
    {"op": "run", "limits": {...}, "args": [...]}              -> {"exit_code", "signal", "cpu_s", ...}
    {"op": "test", "limits", "args", "input_bytes": N} + N raw bytes -> as run, then one byte
    {"op": "shell", "cmd": ..., "limits": {...}}               -> same, workdir kept between calls

A run's reply has the fields of the host's record of a run (LauncherReply in backend/sandbox/result.py,
which this process cannot import; tests/sandbox/test_run_record.py checks the keys) and
`stdout_bytes`: that many raw bytes of the program's output follow it, streamed from its file so
that this process never holds a large output in memory (it runs under the test's cap).
`stage` + `run` put the input in place first, so the host measures the memory baseline after it.
`test` is one test in one round trip (the judge's hot path): the host arms the cgroup first,
counting the input's pages into the baseline, and its raw bytes follow the header; they are
copied to the stdin file through one preallocated buffer, so this process allocates nothing that
the test's peak could see. After the output, everything the test left (output, input, files) is
freed and then one byte is sent, so the host's next baseline never sees this test's pages.

Each test is a fork with its own rlimits. Python programs are exec()'d in the forked, already
warm interpreter, so no interpreter start-up is paid per test, and end as python3 ends them
(launcher_python.py). CPU time: with --cpu-counter (the sandbox's cgroup, opened read-only by the
host) it is the CPU of *every* process of the test, the counter's delta less this process's own,
enforced live; without it (rlimits accounting) it is the
direct child's, from wait4(). After every test all other processes are SIGKILLed: as PID 1 of the
namespace with kill(-1) (PID 1 itself ignores signals sent from inside), otherwise by group.
The host keeps expected outputs; this process only ever holds the current test's input.
"""

import _json
import _signal
import binascii
import gc
import os
import resource
import struct
import time

from launcher_files import (
    FOLDER_MODES,
    IO_DIR,
    IO_PATHS,
    OWN_FILES,
    RUN_DIR,
    WORK,
    clear_leftovers,
    free_io,
    mark_used,
    remove,
    sealed_image,
    stage,
    stage_raw,
)
from launcher_limits import PID1, TestClock, kill_everything_else, prefer_as_oom_victim, rlimits, wait_within_limits
from launcher_python import install_site_builtins, program_module, program_stdio, run_program

CTRL_IN, CTRL_OUT = os.dup(0), os.dup(1)
STDERR_KEEP = 8192
CHUNK = 1 << 20


# JSON through the stdlib's C codec (`_json`, what the `json` package drives), not the package:
# that imports `re`, and every page this process holds is copied into each test's fork and torn
# down at its exit. Same settings and output as json.loads / json.dumps.
class _Decoding:
    strict, object_hook, object_pairs_hook = True, None, None
    parse_float, parse_int, parse_constant = float, int, float


def _unencodable(obj):
    raise TypeError(f"cannot send a {type(obj).__name__}")


_scan = _json.make_scanner(_Decoding())
_encode = _json.make_encoder(None, _unencodable, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True)


def recv():
    header = _read_exact(4)
    if not header:
        return None
    return _scan(_read_exact(struct.unpack(">I", header)[0]).decode(), 0)[0]


def send(obj, tail=b""):
    """One message, and `tail` (raw bytes that follow it) in the same write."""
    data = "".join(_encode(obj, 0)).encode()
    write_all(struct.pack(">I", len(data)) + data + tail)


def write_all(data):
    view = memoryview(data)
    while view:
        view = view[os.write(CTRL_OUT, view) :]


def _read_exact(n):
    chunks = []
    while n:
        chunk = os.read(CTRL_IN, min(n, 1 << 20))
        if not chunk:
            return b""
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


# Every step between fork and the program is kept to a few C calls: each Python object the child
# touches costs it a copy-on-write page fault, and those faults would be most of a test's cost.
CHILD_SIGNALS = (_signal.SIGINT, _signal.SIGPIPE, _signal.SIGTERM, _signal.SIGXFSZ, _signal.SIGCHLD)
WRITE_NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
CHILD_IO = tuple(zip(IO_PATHS, (os.O_RDONLY, WRITE_NEW, WRITE_NEW), strict=True))  # fd 0, 1, 2


def reset_child_state(keep_fd=None):
    for sig in CHILD_SIGNALS:
        _signal.signal(sig, _signal.SIG_DFL)
    if not PID1:
        os.setsid()  # our own group, so cleanup can kill it without kill(-1)
    for target, (path, flags) in enumerate(CHILD_IO):
        os.dup2(os.open(path, flags, 0o600), target)
    if keep_fd is None:
        os.closerange(3, 1 << 16)
    else:  # the program's sealed image, which the child execs
        os.closerange(3, keep_fd)
        os.closerange(keep_fd + 1, 1 << 16)
    os.chdir(RUN_DIR)


def prepare_child_stdio():
    """fds 0 and 1 pointed at /dev/null (seekable, like the test's files; this process speaks
    through its own copies of the host's pipes), fd 2 left as the host's pipe for this process's
    own errors; a child puts the test's files under those three fds before the program runs. The
    program's stream objects on them are made once, here (launcher_python.program_stdio)."""
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    program_stdio()


def run_child(target, lim, keep_fd=None):
    """Fork, exec the target under limits, wait with a wall backstop, measure. target(): never
    returns; `keep_fd` stays open in the child for it. The output stays in its file: `reply()`
    streams it."""
    limits = rlimits(lim)
    mark_used()
    clock = TestClock()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            reset_child_state(keep_fd)
            for which, value in limits:
                resource.setrlimit(which, value)
            prefer_as_oom_victim()
            target()
        finally:
            os._exit(127)
    backstop_fired = wait_within_limits(pid, clock, float(lim["cpu_s"]), float(lim["wall_s"]), start)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    kill_everything_else(pid)
    out_path, err_path = IO_PATHS[1:]
    fd = os.open(err_path, os.O_RDONLY)
    try:
        err = os.pread(fd, STDERR_KEEP, max(0, os.fstat(fd).st_size - STDERR_KEEP))
    finally:
        os.close(fd)
    return {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": usage.ru_utime + usage.ru_stime if clock.start is None else clock.used(pid),
        "wall_s": wall,
        "mem_mb": usage.ru_maxrss / 1024.0,
        "wall_backstop_fired": backstop_fired,
        "stdout_bytes": min(os.path.getsize(out_path), (int(lim["output_mb"]) << 20) + 1),
        "stderr": err.decode("utf-8", "replace"),
    }


def reply(res, freed_marker=False):
    """Send a run's reply, then its output straight from the file, in chunks; then free the
    tmpfs pages, which would otherwise count towards the next test's memory baseline (for a
    `test`, also its input and files, then the one-byte marker that says so)."""
    size, offset = res["stdout_bytes"], 0
    fd = os.open(IO_PATHS[1], os.O_RDONLY)
    try:
        while True:
            want = min(CHUNK, size - offset)
            chunk = os.pread(fd, want, offset) if want else b""
            chunk += b"\0" * (want - len(chunk))  # shrank under us: keep the framing
            if offset == 0:
                send(res, chunk)  # the reply and a small output in one write
            else:
                write_all(chunk)
            offset += want
            if offset >= size:
                break
    finally:
        os.close(fd)
    free_io(size, bool(res["stderr"]))
    if freed_marker:
        os.truncate(IO_PATHS[0], 0)
        clear_leftovers()
        os.write(CTRL_OUT, b"\0")


class Program:
    def __init__(self):
        self.language = None
        self.code = None
        self.binary = os.path.join(WORK, "prog")
        self.image = None  # the binary as a sealed memfd, what every test execs
        self.headers = set()

    def load(self, msg):
        self.forget_previous()
        self.language = msg["language"]
        if self.language == "binary":  # a checker compiled earlier (special.py's cache)
            with open(self.binary, "wb") as f:
                f.write(binascii.a2b_base64(msg["binary_b64"]))
            self.language = "cpp"
            self.image = sealed_image(self.binary)
            return {"ok": True, "error": None}
        if self.language == "python":
            try:
                self.code = compile(msg["source"], "solution.py", "exec")
            except (SyntaxError, ValueError) as exc:
                import traceback  # a program that does not parse runs no test

                return {"ok": False, "error": "".join(traceback.format_exception_only(type(exc), exc))[-2000:]}
            prelude = msg.get("prelude")
            program_module(compile(prelude, "prelude.py", "exec") if prelude else None)
            if prelude:
                shed_free_memory()  # the imports' garbage, before every test's fork maps it
            gc.freeze()  # a child's garbage collections then leave this warm state's pages shared
            return {"ok": True, "error": None}
        src = os.path.join(WORK, "prog.cpp")
        with open(src, "w") as f:
            f.write(msg["source"])
        for name, text in (msg.get("headers") or {}).items():  # e.g. testlib.h beside a checker
            with open(os.path.join(WORK, os.path.basename(name)), "w") as f:
                f.write(text)
            self.headers.add(os.path.basename(name))
        OWN_FILES.update(self.headers)
        cmd = ["/usr/bin/g++", "-O2", "-std=c++17", "-pipe", "-o", self.binary, src]
        env = {"PATH": "/usr/bin:/bin", "TMPDIR": IO_DIR}
        lim = msg["compile_limits"]
        stage("", keep_dir=True)
        res = run_child(lambda: os.execve(cmd[0], cmd, env), lim)
        free_io()
        ok = res["exit_code"] == 0 and os.path.exists(self.binary)
        error = None if ok else (res["stderr"] or f"compiler stopped: {res}")[-2000:]
        if res["wall_backstop_fired"] or (res["signal"] is not None and not ok):
            error = f"compilation exceeded its limits ({lim['cpu_s']}s CPU, {lim['memory_mb']} MB)"
        reply = {"ok": ok, "error": error}
        if ok and msg.get("return_binary"):
            with open(self.binary, "rb") as f:
                reply["binary_b64"] = binascii.b2a_base64(f.read(), newline=False).decode()
        if ok:
            self.image = sealed_image(self.binary)
        return reply

    def forget_previous(self):
        """A docker container serves many programs: the next one sees no binary, source or header
        of the one before (the bwrap sandbox is a fresh tmpfs per program)."""
        for name in ("prog", "prog.cpp", *self.headers):
            remove(os.path.join(WORK, name))
        OWN_FILES.difference_update(self.headers)
        self.headers = set()
        if self.image is not None:
            os.close(self.image)
            self.image = None

    def target(self, args=()):
        if self.language == "python":
            run_program(self.code, args)
        os.execve(self.image, [self.binary, *args], {"PATH": "/usr/bin:/bin"})


def shell_target(cmd):
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": RUN_DIR, "LANG": "C.UTF-8"}
    return lambda: os.execve("/bin/sh", ["/bin/sh", "-c", cmd], env)


def libc():
    import ctypes

    return ctypes.CDLL(None)


def make_untraceable():
    """Non-dumpable: a program (same uid) can neither ptrace us nor read /proc/1/mem."""
    libc().prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4


def shed_free_memory():
    """Collect start-up garbage and hand malloc's free pages back to the kernel: every page this
    process holds is mapped into each test's fork and unmapped at its exit."""
    gc.collect()
    libc().malloc_trim(0)


def main():
    # This process's own garbage is freed by reference counting; a collection here would write to
    # every tracked object, and after each fork every page written is a copy-on-write fault.
    gc.disable()
    make_untraceable()
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    _signal.signal(_signal.SIGTERM, _signal.SIG_IGN if PID1 else _signal.SIG_DFL)
    os.makedirs(IO_DIR, exist_ok=True)
    os.makedirs(RUN_DIR, exist_ok=True)
    for path in IO_PATHS:
        open(path, "a").close()
    FOLDER_MODES.update({folder: os.lstat(folder).st_mode for folder in (WORK, IO_DIR, RUN_DIR)})
    prepare_child_stdio()
    install_site_builtins()
    program_module()
    program = Program()
    shed_free_memory()
    send({"ready": True, "pid": os.getpid()})
    while True:
        msg = recv()
        if msg is None or msg["op"] == "exit":
            return
        try:
            if msg["op"] == "load":
                send(program.load(msg))
            elif msg["op"] == "stage":
                send(stage(msg.get("input", ""), msg.get("files"), msg.get("keep_dir", False)))
            elif msg["op"] == "test":
                stage_raw(msg["input_bytes"], CTRL_IN)
                res = run_child(lambda args=msg.get("args", []): program.target(args), msg["limits"], program.image)
                reply(res, freed_marker=True)
            elif msg["op"] == "run":
                reply(run_child(lambda args=msg.get("args", []): program.target(args), msg["limits"], program.image))
            elif msg["op"] == "shell":
                reply(run_child(shell_target(msg["cmd"]), msg["limits"]))
            else:
                send({"error": f"unknown op {msg['op']}"})
        except Exception as exc:  # a sandbox error, reported to the host as SE
            send({"launcher_error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    main()
