"""Hostile suite: each program attacks the sandbox; each asserts its verdict and an unchanged host.

The expected output of every test is what a *successful* attack would print, so a leak shows up
as AC where the suite demands WA/RE; harmless-by-design probes expect their blocked answer.
"""

import socket
import threading

import pytest

from backend.grading.judge import JudgeTest
from backend.grading.limits import JudgeLimits
from tests.sandbox.speed import scaled

LIMITS = JudgeLimits(time_limit_s=0.5, memory_mb=128, output_mb=2, max_procs=16)
SECRET = "flab-host-secret-4242"


def py(body: str) -> tuple[str, str]:
    return body, "python"


def cpp(body: str) -> tuple[str, str]:
    return "#include <bits/stdc++.h>\n#include <unistd.h>\n#include <sys/wait.h>\nusing namespace std;\n" + body, "cpp"


# name -> (program, allowed verdicts, expected output). {canary} and {port} are filled in per run.
CASES = {
    "fork_bomb_py": (py("import os\nwhile True:\n    os.fork()"), {"RE", "TLE"}, "x"),
    "fork_bomb_cpp": (cpp("int main(){for(;;) fork();}"), {"TLE", "RE"}, "x"),
    "memory_bomb_py": (py("a = []\nwhile True:\n    a.append(' ' * 10**7)"), {"MLE"}, "x"),
    "memory_bomb_cpp": (cpp("int main(){vector<string> v; for(;;) v.emplace_back(1<<24, 'x');}"), {"MLE"}, "x"),
    "mmap_bomb_py": (py("import mmap\nm = mmap.mmap(-1, 1 << 31)\nm[-1] = 1\nprint('mapped')"), {"MLE"}, "mapped"),
    "disk_fill_py": (py("f = open('junk', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))"), {"OLE", "RE"}, "x"),
    "disk_fill_tmp_py": (
        py("f = open('/tmp/pwned', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))"),
        {"OLE", "RE"},
        "x",
    ),
    "output_flood_py": (py("import sys\nwhile True:\n    sys.stdout.write('y' * 65536)"), {"OLE"}, "x"),
    "output_flood_cpp": (cpp("int main(){string s(65536,'y'); for(;;) cout<<s;}"), {"OLE"}, "x"),
    "network_connect_host": (
        py("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\nprint('connected')"),
        {"RE"},
        "connected",
    ),
    "network_connect_outside": (
        py("import socket\nsocket.create_connection(('93.184.216.34', 80), timeout=1)\nprint('connected')"),
        {"RE"},
        "connected",
    ),
    "dns_lookup": (py("import socket\nprint(socket.gethostbyname('example.com'))"), {"RE", "WA"}, "93.184.216.34"),
    "read_etc_shadow": (py("print(open('/etc/shadow').read())"), {"RE"}, "root"),
    "read_etc_passwd_cpp": (
        cpp('int main(){ifstream f("/etc/passwd"); string s; if(!(f>>s)) return 3; cout<<s;}'),
        {"RE"},
        "root",
    ),
    "host_environment": (py("import os\nprint(os.environ.get('FLAB_HOST_SECRET', 'none'))"), {"WA"}, SECRET),
    "host_environment_cpp": (
        cpp('int main(){const char*s=getenv("FLAB_HOST_SECRET"); cout<<(s?s:"none")<<endl;}'),
        {"WA"},
        SECRET,
    ),
    "find_expected_output": (
        py(
            "import os\nfor root, dirs, files in os.walk('/'):\n"
            "    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ('/proc', '/sys', '/usr', '/dev')]\n"
            "    for name in files:\n        try:\n"
            "            data = open(os.path.join(root, name), errors='ignore').read(1 << 16)\n"
            "        except OSError:\n            continue\n"
            "        if 'EXPECTED-MARKER' in data:\n            print(data.strip())\n"
            "            raise SystemExit\nprint('nothing')"
        ),
        {"WA"},
        "EXPECTED-MARKER",
    ),
    "write_outside_workdir": (py("open('/usr/pwned', 'w').write('x')\nprint('written')"), {"RE"}, "written"),
    "write_host_canary": (py("open('{canary}', 'w').write('pwned')\nprint('written')"), {"RE"}, "written"),
    "write_root": (py("open('/pwned', 'w').write('x')\nprint('written')"), {"RE"}, "written"),
    "kill_parent": (py("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('alive')"), {"AC"}, "alive"),
    "signal_pid1": (
        py(
            "import os, signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP):\n"
            "    os.kill(1, s)\nprint('alive')"
        ),
        {"AC"},
        "alive",
    ),
    "kill_everything": (py("import os, signal\nos.kill(-1, signal.SIGKILL)\nprint('x')"), {"RE"}, "x"),
    "daemon_outlives_test": (
        py(
            "import os, time\n"
            "others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]\n"
            "print('clean' if not others else 'daemon alive')\n"
            "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\n"
        ),
        {"AC"},
        "clean",
    ),
    "ignore_sigterm_and_sleep": (
        py("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(1000)"),
        {"TLE"},
        "x",
    ),
    "sleep_forever": (py("import time\nwhile True:\n    time.sleep(1)"), {"TLE"}, "x"),
    "sleep_forever_cpp": (cpp("int main(){for(;;) sleep(1);}"), {"TLE"}, "x"),
    "thread_bomb": (
        # the thread limit raises in the main code; then, as python3 does, the sleepers are joined
        py("import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(100,)).start()"),
        {"TLE"},
        "x",
    ),
    "raise_rlimits": (
        py(
            "import resource\ntry:\n"
            "    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
            "    print('raised')\nexcept (ValueError, OSError):\n    print('blocked')"
        ),
        {"AC"},
        "blocked",
    ),
    "ctypes_setuid_root": (py("import ctypes\nprint(ctypes.CDLL(None).setuid(0))"), {"AC"}, "-1"),
    "ctypes_kill_init": (
        py("import ctypes, os\nctypes.CDLL(None).kill(1, 9)\nprint(len([p for p in os.listdir('/proc') if p == '1']))"),
        {"AC"},
        "1",
    ),
    "ctypes_new_user_namespace": (py("import ctypes\nprint(ctypes.CDLL(None).unshare(0x10000000))"), {"AC"}, "-1"),
    "ptrace_launcher": (py("import ctypes\nprint(ctypes.CDLL(None).ptrace(16, 1, 0, 0))"), {"AC"}, "-1"),
    "exit_before_printing": (py("import os\nos._exit(0)\nprint(3)"), {"WA"}, "3"),
    "read_proc_of_others": (
        py("import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()))"),
        {"AC"},
        "[1]",
    ),
    "read_launcher_memory": (py("print(open('/proc/1/mem', 'rb').read(16))"), {"RE"}, "x"),
    "subprocess_left_behind": (
        py("import subprocess\nsubprocess.Popen(['/bin/sleep', '100'])\nprint('spawned')"),
        {"AC"},
        "spawned",
    ),
    "device_access": (py("print(open('/dev/sda', 'rb').read(4))"), {"RE"}, "x"),
    "sethostname": (py("import socket\nsocket.sethostname('pwned')\nprint('renamed')"), {"RE"}, "renamed"),
    "stack_overflow_cpp": (
        cpp("int f(int n){volatile char b[4096]; b[0]=n; return f(n+1)+b[0];}\nint main(){cout<<f(0);}"),
        {"RE", "MLE"},
        "x",
    ),
}


@pytest.fixture
def host_listener():
    """A server on the host's loopback; a sandboxed program must never reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    hits = []

    def accept():
        while not stop.is_set():
            try:
                hits.append(server.accept())
            except OSError:
                pass

    stop = threading.Event()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    stop.set()
    thread.join()
    server.close()


# C++ cases compile (seconds each) and the wall-clock cases wait out their limit: slow tier
SLOW_CASES = {name for name in CASES if name.endswith("_cpp") or name in ("sleep_forever", "ignore_sigterm_and_sleep")}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_CASES else n for n in CASES])
def test_hostile_program(run, name, host_guard, host_listener, monkeypatch, tmp_path):
    (source, language), verdicts, expected = CASES[name]
    port, hits = host_listener
    source = source.replace("{canary}", str(host_guard)).replace("{port}", str(port))
    monkeypatch.setenv("FLAB_HOST_SECRET", SECRET)
    (tmp_path / "expected.txt").write_text("EXPECTED-MARKER")
    tests = [JudgeTest("1\n", expected + "\n"), JudgeTest("22\n", expected + "\n")]
    result = run(source, tests, language=language, limits=scaled(LIMITS), run_all=True)
    assert result.verdict in verdicts, (name, result.verdict, result.test_results[0].detail[:300])
    assert all(t.verdict != "SE" for t in result.test_results), "the sandbox must survive every program"
    assert hits == [], "a sandboxed program reached the host's network"


def test_suite_is_big_enough():
    assert len(CASES) >= 30
