"""Our testlib-compatible header (backend/grading/testlib.h) against testlib's documented rules.

1. Checkers written here in the style of testlib's stock ones (the same API calls) run on a
   table of (output, answer) files; each expected exit code is written from testlib's rules:
   0 ok, 1 wrong answer, 2 presentation error (malformed token, unexpected EOF, extra output),
   3 fail (the answer or input is malformed, or the checker never quits), 7 points.
2. With FLAB_TESTLIB_REPO pointing at a checkout of testlib (a fetched peer; nothing of it is
   committed), every checker in its checkers/ folder is compiled against the real testlib.h and
   against ours, and both must give the same exit code on every row of a table of files.
"""

import itertools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from backend.grading.judge import JudgeTest, Program, SpecialJudge, judge
from tests.conftest import built_once

pytestmark = (
    pytest.mark.slow
)  # compiles testlib's checkers (tens of seconds): make test runs it, make test-fast does not

HEADER = Path(__file__).resolve().parents[2] / "backend" / "grading" / "testlib.h"

CHECKERS = {
    # int64 sequences: every answer number must be matched; left-over output is testlib's business
    "numbers": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          int n = 0; while (!ans.seekEof()) { long long j = ans.readLong(), p = ouf.readLong(); n++;
            if (j != p) quitf(_wa, "%d%s numbers differ", n, englishEnding(n).c_str()); }
          quitf(_ok, "%d numbers", n); }""",
    "tokens": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          while (!ans.seekEof()) { std::string j = ans.readWord(), p = ouf.readWord();
            if (j != p) quitf(_wa, "expected %s, found %s", j.c_str(), p.c_str()); }
          quitf(_ok, "tokens"); }""",
    "lines": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          while (!ans.eof()) { std::string j = ans.readString(); if (j == "" && ans.eof()) break;
            std::string p = ouf.readString(); if (trim(j) != trim(p)) quitf(_wa, "line differs"); }
          quitf(_ok, "lines"); }""",
    "doubles_1e-4": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          while (!ans.seekEof()) { double j = ans.readDouble(), p = ouf.readDouble();
            if (!doubleCompare(j, p, 1e-4)) quitf(_wa, "expected %.6f, found %.6f", j, p); }
          quitf(_ok, "doubles"); }""",
    "yes_no": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          std::string j = upperCase(ans.readWord()), p = upperCase(ouf.readWord());
          if (p != "YES" && p != "NO") quitf(_pe, "YES or NO expected");
          if (j != p) quitf(_wa, "expected %s", j.c_str()); quitf(_ok, "%s", j.c_str()); }""",
    "huge_integer": """
        pattern number("0|-?[1-9][0-9]*");
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          std::string j = ans.readWord(), p = ouf.readWord();
          if (!number.matches(p)) quitf(_pe, "not an integer"); \
if (j != p) quitf(_wa, "differ"); quitf(_ok, "ok"); }""",
    "bounded": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          int k = ouf.readInt(1, 10, "k"); (void)k; quitf(_ok, "in range"); }""",
    "points": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv);
          double p = ouf.readDouble(); quitp(p, "points"); }""",
    "forgets_to_quit": """
        int main(int argc, char* argv[]) { registerTestlibCmd(argc, argv); ouf.readWord(); return 0; }""",
}

# (checker, output, answer, exit code by testlib's rules)
TABLE = [
    ("numbers", "1 2 3", "1 2 3", 0),
    ("numbers", "1 2 3\n\n \t\n", "1 2 3", 0),  # trailing blanks are not extra output
    ("numbers", "1\r\n2\r\n3\r\n", "1 2 3", 0),  # CR is a blank
    ("numbers", "1 2 4", "1 2 3", 1),
    ("numbers", "1 2", "1 2 3", 2),  # unexpected end of file -> presentation error
    ("numbers", "1 2 3 4", "1 2 3", 2),  # accepted with output left over: extra information
    ("numbers", "01 2 3", "1 2 3", 2),  # no leading zeros
    ("numbers", "+1 2 3", "1 2 3", 2),  # no '+'
    ("numbers", "-0 2 3", "0 2 3", 2),  # no "-0"
    ("numbers", "1 2 3x", "1 2 3", 2),
    ("numbers", "99999999999999999999 2 3", "1 2 3", 2),  # out of int64
    ("numbers", "-9223372036854775808", "-9223372036854775808", 0),
    ("numbers", "1 2 3", "1 2 z", 3),  # a malformed answer is the checker's failure
    ("numbers", "1\f2 3", "1 2 3", 2),  # a form feed is not a blank in testlib
    ("tokens", "a   b\n", "a b", 0),
    ("tokens", "a b c", "a b", 2),
    ("tokens", "a", "a b", 2),
    ("tokens", "a B", "a b", 1),
    ("lines", "a b\r\nc\n", "a b\nc\n", 0),
    ("lines", "a b\nd\n", "a b\nc\n", 1),
    ("doubles_1e-4", "1.00005", "1", 0),
    ("doubles_1e-4", "1.0e0", "1", 0),
    ("doubles_1e-4", "1000.05", "1000", 0),  # relative error 5e-5
    ("doubles_1e-4", "1.001", "1", 1),
    ("doubles_1e-4", "nan", "1", 2),  # only digits, '.', e, signs
    ("doubles_1e-4", "0x1p0", "1", 2),
    ("doubles_1e-4", "1e400", "1", 1),  # infinite: parsed, then wrong
    ("doubles_1e-4", "1.5.", "1.5", 2),
    ("yes_no", "yes", "YES", 0),
    ("yes_no", "No", "YES", 1),
    ("yes_no", "maybe", "YES", 2),
    ("yes_no", "YES\nYES", "YES", 2),  # extra output after an accepted answer
    ("huge_integer", "123456789012345678901234567890", "123456789012345678901234567890", 0),
    ("huge_integer", "0123", "123", 2),
    ("huge_integer", "-5", "-5", 0),
    ("bounded", "10", "", 0),
    ("bounded", "11", "", 1),  # out of range in the output: wrong answer
    ("points", "0.5", "", 7),
    ("points", "-1", "", 3),  # negative points: the checker fails
    ("points", "1e300", "", 3),  # testlib calls anything above 1e300 infinite
    ("forgets_to_quit", "x", "", 3),
]


def compile_checker(source: str, header: Path, out: Path) -> Path:
    (out.parent / "testlib.h").write_text(header.read_text())
    src = out.with_suffix(".cpp")
    src.write_text('#include "testlib.h"\n' + source)
    subprocess.run(["g++", "-O1", "-std=c++17", "-o", str(out), str(src)], check=True, capture_output=True)
    return out


def exit_code(binary: Path, folder: Path, output: str, answer: str, inp: str = "") -> int:
    for name, text in (("input.txt", inp), ("output.txt", output), ("answer.txt", answer)):
        (folder / name).write_text(text)
    files = [str(folder / n) for n in ("input.txt", "output.txt", "answer.txt")]
    return subprocess.run([str(binary), *files], capture_output=True, timeout=20).returncode


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    """Each checker compiled once per run (the xdist workers share the binaries)."""

    def build(folder):
        for name, src in CHECKERS.items():
            compile_checker(src, HEADER, folder / name)

    folder = built_once(tmp_path_factory, "testlib-checkers", build)
    return {name: folder / name for name in CHECKERS}


@pytest.mark.parametrize("checker,output,answer,expected", TABLE, ids=[f"{r[0]}:{r[1][:12]!r}" for r in TABLE])
def test_checker_exit_codes_follow_testlib(binaries, tmp_path, checker, output, answer, expected):
    assert exit_code(binaries[checker], tmp_path, output, answer) == expected


def test_special_judge_in_the_sandbox_gives_wa_for_presentation_errors_and_extra_output():
    checker = SpecialJudge('#include "testlib.h"\n' + CHECKERS["numbers"], "cpp")
    tests = [JudgeTest("", "1 2 3\n")]
    verdict = {
        out: judge(Program(f"print({out!r})"), tests, checker=checker).verdict for out in ("1 2 3", "1 2 3 4", "1 2")
    }
    assert verdict == {"1 2 3": "AC", "1 2 3 4": "WA", "1 2": "WA"}


# -- side by side with the real testlib, when a checkout is given --------------------------------

SIDE_BY_SIDE = [  # (input, output, answer): numbers, words, lines, doubles, yes/no, huge ints
    "1 2 3", "1 2 3 ", "1 2 4", "1 2", "1 2 3 4", "01 2 3", "-0", "+1", "1.0", "1.00005", "1.0001",
    "1e-4", "nan", "inf", "YES", "yes", "no", "NO", "a b", "a  b\r\n", "A B", "", "\n", "-123",
    "123456789012345678901234567890",
]  # fmt: skip


@pytest.mark.skipif(not os.environ.get("FLAB_TESTLIB_REPO"), reason="set FLAB_TESTLIB_REPO to a testlib checkout")
def test_every_stock_checker_agrees_with_the_real_testlib(tmp_path):
    repo = Path(os.environ["FLAB_TESTLIB_REPO"])
    checkers = sorted((repo / "checkers").glob("*.cpp"))
    assert len(checkers) >= 20
    disagreements = []
    for src in checkers:
        built = {}
        for label, header in (("real", repo / "testlib.h"), ("ours", HEADER)):
            folder = tmp_path / label / src.stem
            folder.mkdir(parents=True)
            shutil.copy(header, folder / "testlib.h")
            shutil.copy(src, folder / src.name)
            binary = folder / "checker"
            subprocess.run(["g++", "-O1", "-std=c++17", "-o", str(binary), str(folder / src.name)], check=True)
            built[label] = binary
        for output, answer in itertools.product(SIDE_BY_SIDE, repeat=2):
            codes = {label: exit_code(b, b.parent, output, answer, "1") for label, b in built.items()}
            if codes["real"] != codes["ours"]:
                disagreements.append((src.stem, output, answer, codes))
    by_checker = {}
    for d in disagreements:
        by_checker.setdefault(d[0], []).append(d[1:])
    assert not disagreements, {k: (len(v), v[:4]) for k, v in by_checker.items()}
