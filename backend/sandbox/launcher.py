"""The warm fork server that runs *inside* the sandbox (bwrap, docker or none).

Stdlib only, started once per program with
`python3 -I -S launcher.py WORKDIR [--pid1] [--cpu-counter FD|PATH:v1|v2]`. It speaks
length-prefixed JSON on fds 0/1 with the host:

    {"op": "load", "language": "python"|"cpp"|"binary", ...}    -> {"ok", "error"[, "binary_b64"]}
    {"op": "stage", "input": ..., "files": {...}, "keep_dir"}   -> {"ok"}
    {"op": "run", "limits": {...}, "args": [...]}              -> {"exit_code", "signal", "cpu_s", ...}
    {"op": "test", "limits", "args", "input_bytes": N} + N raw bytes -> as run, then one byte
    {"op": "shell", "cmd": ..., "limits": {...}}               -> same, workdir kept between calls

A run's reply is followed by `stdout_bytes` raw bytes of the program's output, streamed from its
file so that this process never holds a large output in memory (it runs under the test's cap).
`stage` + `run` put the input in place first, so the host measures the memory baseline after it.
`test` is one test in one round trip (the judge's hot path): the host arms the cgroup first,
counting the input's pages into the baseline, and its raw bytes follow the header; they are
copied to the stdin file through one preallocated buffer, so this process allocates nothing that
the test's peak could see. After the output, everything the test left (output, input, files) is
freed and then one byte is sent, so the host's next baseline never sees this test's pages.

Each test is a fork with its own rlimits. Python programs are exec()'d in the forked, already
warm interpreter, so no interpreter start-up is paid per test. CPU time: with --cpu-counter (the
sandbox's cgroup, opened read-only by the host) it is the CPU of *every* process of the test, the
counter's delta less this process's own, enforced live; without it (rlimits accounting) it is the
direct child's, from wait4(). After every test all other processes are SIGKILLed: as PID 1 of the
namespace with kill(-1) (PID 1 itself ignores signals sent from inside), otherwise by group.
The host keeps expected outputs; this process only ever holds the current test's input.
"""

import _json
import _signal
import binascii
import fcntl
import gc
import os
import resource
import select
import struct
import sys
import time

WORK = sys.argv[1] if len(sys.argv) > 1 else "/work"
PID1 = "--pid1" in sys.argv
RUN_DIR = os.path.join(WORK, "run")
IO_DIR = os.path.join(WORK, ".io")
IO_PATHS = tuple(os.path.join(IO_DIR, name) for name in ("stdin", "stdout", "stderr"))
CTRL_IN, CTRL_OUT = os.dup(0), os.dup(1)
STDERR_KEEP = 8192
TICKS = os.sysconf("SC_CLK_TCK")
CHUNK = 1 << 20
FOLDER_MODES = {}  # set at start: the work, .io and run folders' modes as made
IO_NAMES = {"stdin", "stdout", "stderr"}
OWN_FILES = {"run", ".io", "prog", "prog.cpp"}  # and headers a load writes beside prog.cpp
CHILD_STDIO = None  # set at start: prepare_child_stdio()
LEFT_CLEAN = False  # True: nothing has run since clear_leftovers() last finished
INPUT_BUFFER = bytearray(1 << 16)  # allocated once, before any test: a test's peak never sees it


def _cpu_counter_arg():
    if "--cpu-counter" not in sys.argv:
        return None
    where, fmt = sys.argv[sys.argv.index("--cpu-counter") + 1].rsplit(":", 1)
    fd = int(where) if where.isdigit() else os.open(where, os.O_RDONLY)
    return fd, fmt


CPU_COUNTER = _cpu_counter_arg()


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


def rlimits(lim):
    """The test's rlimits, soft = hard so the program cannot raise them back; computed in the
    launcher, so the forked child only makes the syscalls.

    Under a cgroup the memory cap is the cgroup's, over all processes; RLIMIT_AS is then only a
    generous backstop against mapping games, so threads and runtimes that reserve address space
    they never touch work. Without one (rlimits accounting) RLIMIT_AS is the memory cap itself.
    The stack is half the memory limit (at most 1 GB): deep recursion works, and glibc, which
    sizes each thread's stack from RLIMIT_STACK, can still map a few thread stacks.
    """
    cpu = int(lim["cpu_s"]) + 1
    memory = int(lim["memory_mb"]) << 20
    caps = (
        (resource.RLIMIT_AS, 4 * memory + (1 << 30) if CPU_COUNTER else memory),
        (resource.RLIMIT_FSIZE, int(lim["output_mb"]) << 20),
        (resource.RLIMIT_NPROC, int(lim["max_procs"])),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 64),
        (resource.RLIMIT_STACK, max(8 << 20, min(memory // 2, 1 << 30))),
    )
    return ((resource.RLIMIT_CPU, (cpu, cpu + 1)), *((which, (value, value)) for which, value in caps))


def prefer_as_oom_victim():
    """Under a cgroup's memory cap the kernel kills the largest process; make it the program's,
    not the launcher's (raising one's own score needs no privilege)."""
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        os.write(fd, b"1000")
        os.close(fd)
    except OSError:
        pass


# Every step between fork and the program is kept to a few C calls: each Python object the child
# touches costs it a copy-on-write page fault, and those faults were most of a test's cost.
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
    """The program's sys.stdin, stdout and stderr, made once here rather than in every child (each
    object a child makes costs it page faults). They are made on fds 0 and 1 pointed at /dev/null
    (seekable, like the test's files; this process speaks through its own copies of the host's
    pipes) and on fd 2, the host's pipe for this process's own errors; a child puts the test's
    files under those three fds before the program runs, and this process never uses the objects."""
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return open(0, closefd=False), open(1, "w", closefd=False), open(2, "w", closefd=False)


def exec_python(code, args=()):
    gc.enable()  # the program runs with the usual collector
    sys.stdin, sys.stdout, sys.stderr = CHILD_STDIO  # over the test's files, put under fds 0-2
    sys.argv = ["solution.py", *args]
    status = 0
    try:
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as exc:
        if isinstance(exc.code, int):
            status = exc.code
        elif exc.code is not None:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # hide this launcher's frame
        sys.__excepthook__(type(exc), exc, tb)  # the interpreter's own report, in C: no import
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        status = status or 1
    os._exit(status & 0xFF)


def kill_everything_else(main_pid):
    if PID1:
        try:
            os.kill(-1, _signal.SIGKILL)  # every process in the namespace but us
        except ProcessLookupError:
            pass
    else:
        try:
            os.killpg(main_pid, _signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    while True:  # reap the child, and as PID 1 every orphan reparented to us
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not PID1:
                return
            time.sleep(0.0005)


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def own_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def group_cpu():
    fd, fmt = CPU_COUNTER
    text = os.pread(fd, 4096, 0).decode()
    if fmt == "v1":
        return int(text) / 1e9
    for line in text.splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6
    return 0.0


class TestClock:
    """CPU time of one test: every process of it (the cgroup's counter less this launcher's own
    CPU) or, under rlimits accounting, the direct child's."""

    def __init__(self):
        self.start = (group_cpu(), own_cpu()) if CPU_COUNTER else None

    def used(self, pid):
        if self.start is None:
            return cpu_seconds(pid)
        return (group_cpu() - self.start[0]) - (own_cpu() - self.start[1])


def runqueue_wait(pid):
    """Seconds the process spent runnable but waiting for a CPU (/proc/PID/schedstat): the wall
    backstop is for sleepers, and a busy machine's queue must not turn a computing program's
    wait into TLE."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def wait_within_limits(pid, clock, cpu_limit, wall_limit, start):
    """Wait for the child; SIGKILL it once the test's CPU time passes the limit (RLIMIT_CPU only
    has whole seconds) or the wall backstop expires: wall time less the main process's wait for a
    CPU, so that only sleeping counts. Returns True when the wall backstop fired."""
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    try:
        # CPU time cannot run ahead of the wall clock by more than the thread count, so the
        # first check comes at a fraction of the limit and then every 20 ms.
        slice_s = cpu_limit / 4
        while not poller.poll(slice_s * 1000):
            elapsed = time.monotonic() - start
            if clock.used(pid) > cpu_limit + 0.02:
                os.kill(pid, _signal.SIGKILL)
                return False
            # the host gives up 10 s past the wall limit: the queue may stretch it by 8 s at most
            not_queued = elapsed - runqueue_wait(pid)
            if not_queued > wall_limit or elapsed > wall_limit + 8:
                os.kill(pid, _signal.SIGKILL)
                return True
            slice_s = min(0.02, max(0.001, wall_limit - not_queued))
        return False
    finally:
        os.close(pidfd)


def stage(stdin_data, files=None, keep_dir=False):
    """Put the test's input in place before the host takes its memory baseline."""
    global LEFT_CLEAN
    if not keep_dir:
        clear_leftovers()
    LEFT_CLEAN = False
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


def stage_raw(size):
    """The `test` op's input: `size` raw bytes from the host straight into the stdin file (the
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
        got = os.readv(CTRL_IN, [view[: min(size, len(view))]])
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


def run_child(target, lim, keep_fd=None):
    """Fork, exec the target under limits, wait with a wall backstop, measure. target(): never
    returns; `keep_fd` stays open in the child for it. The output stays in its file: `reply()`
    streams it."""
    global LEFT_CLEAN
    limits = rlimits(lim)
    LEFT_CLEAN = False
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
    timed_out = wait_within_limits(pid, clock, float(lim["cpu_s"]), float(lim["wall_s"]), start)
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
        "timed_out": timed_out,
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


def free_io(stdout=True, stderr=True):
    """Empty the output files (an empty one is left alone: a truncate is a path walk)."""
    for path, used in zip(IO_PATHS[1:], (stdout, stderr), strict=True):
        if used:
            os.truncate(path, 0)


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
        if res["timed_out"] or (res["signal"] is not None and not ok):
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
            exec_python(self.code, args)
        os.execve(self.image, [self.binary, *args], {"PATH": "/usr/bin:/bin"})


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
    global CHILD_STDIO
    for path in IO_PATHS:
        open(path, "a").close()
    FOLDER_MODES.update({folder: os.lstat(folder).st_mode for folder in (WORK, IO_DIR, RUN_DIR)})
    CHILD_STDIO = prepare_child_stdio()
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
                stage_raw(msg["input_bytes"])
                res = run_child(lambda args=msg.get("args", []): program.target(args), msg["limits"], program.image)
                reply(res, freed_marker=True)
            elif msg["op"] == "run":
                reply(run_child(lambda args=msg.get("args", []): program.target(args), msg["limits"], program.image))
            elif msg["op"] == "shell":
                reply(run_child(shell_target(msg["cmd"]), msg["limits"]))
            else:
                send({"error": f"unknown op {msg['op']}"})
        except Exception as exc:  # a sandbox error, reported to the host as SE
            send({"sandbox_error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    main()
