// A small, testlib-compatible subset for special judges (checkers), written for frontier-lab.
// Covers what checkers commonly use: registerTestlibCmd, inf/ouf/ans streams with readInt,
// readLong, readDouble, readToken/readWord, readLine, eof/seekEof, quitf/quit, ensuref and the
// _ok/_wa/_pe/_fail verdicts (exit codes 0/1/2/3 as in testlib). Checkers that need more of
// testlib: point FLAB_TESTLIB at the real testlib.h.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

enum TResult { _ok = 0, _wa = 1, _pe = 2, _fail = 3 };

[[noreturn]] inline void quit(TResult r, const std::string& msg) {
  std::fprintf(stderr, "%s %s\n", r == _ok ? "ok" : r == _wa ? "wrong answer" : r == _pe ? "wrong output format" : "FAIL",
               msg.c_str());
  std::exit(static_cast<int>(r));
}

[[noreturn]] inline void quitf(TResult r, const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  quit(r, buf);
}

struct InStream {
  std::string data;
  size_t pos = 0;
  TResult on_error = _pe;  // a malformed contestant output is a presentation error; bad files are _fail

  void open(const char* path, TResult err) {
    std::ifstream f(path, std::ios::binary);
    if (!f) quitf(_fail, "cannot open %s", path);
    std::stringstream ss;
    ss << f.rdbuf();
    data = ss.str();
    on_error = err;
  }
  void skipBlanks() { while (pos < data.size() && std::isspace(static_cast<unsigned char>(data[pos]))) ++pos; }
  bool seekEof() { skipBlanks(); return pos >= data.size(); }
  bool eof() { return pos >= data.size(); }
  std::string readToken() {
    skipBlanks();
    if (pos >= data.size()) quitf(on_error, "unexpected end of file");
    size_t start = pos;
    while (pos < data.size() && !std::isspace(static_cast<unsigned char>(data[pos]))) ++pos;
    return data.substr(start, pos - start);
  }
  std::string readWord() { return readToken(); }
  std::string readString() { return readLine(); }
  std::string readLine() {
    size_t start = pos;
    while (pos < data.size() && data[pos] != '\n') ++pos;
    std::string line = data.substr(start, pos - start);
    if (pos < data.size()) ++pos;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }
  long long readLong() {
    std::string t = readToken();
    char* end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 10);
    if (end == t.c_str() || *end) quitf(on_error, "expected an integer, found '%s'", t.c_str());
    return v;
  }
  long long readLong(long long lo, long long hi, const char* = "") {
    long long v = readLong();
    if (v < lo || v > hi) quitf(on_error, "integer %lld out of [%lld, %lld]", v, lo, hi);
    return v;
  }
  int readInt() { return static_cast<int>(readLong()); }
  int readInt(int lo, int hi, const char* name = "") { return static_cast<int>(readLong(lo, hi, name)); }
  double readDouble() {
    std::string t = readToken();
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || *end) quitf(on_error, "expected a number, found '%s'", t.c_str());
    return v;
  }
  double readReal() { return readDouble(); }
  void readEoln() {}
  void readSpace() {}
  void readEof() { if (!seekEof()) quitf(on_error, "extra data at the end"); }
};

inline InStream inf, ouf, ans;

inline void registerTestlibCmd(int argc, char* argv[]) {
  if (argc < 4) quitf(_fail, "usage: checker input output answer");
  inf.open(argv[1], _fail);
  ouf.open(argv[2], _pe);
  ans.open(argv[3], _fail);
}

#define ensuref(cond, ...) \
  do { if (!(cond)) quitf(_fail, __VA_ARGS__); } while (0)
#define ensure(cond) ensuref(cond, "%s", #cond)
