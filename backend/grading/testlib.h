// frontier-lab's testlib-compatible header for checkers (special judges). Written from testlib's
// documented checker API and behaviour, not copied from it: it compiles every checker in
// testlib's checkers/ folder and gives the same verdicts (tests/sandbox/test_testlib.py).
// Set FLAB_TESTLIB to the real testlib.h for checkers that need more (patterns, generators).
//
// Behaviour kept from testlib:
//   - verdicts and exit codes: _ok 0, _wa 1, _pe 2, _fail 3, _dirt -> _pe, _points 7,
//     _unexpected_eof -> _pe, _pc(k) = 16 + k;
//   - an error while reading the input or the answer is the checker's failure (_fail), an error
//     while reading the contestant's output keeps its verdict (_pe for malformed tokens);
//   - accepting with output left over is "Extra information in the output file" (_pe);
//   - blanks are only space, tab, CR and LF; integers are strict (no '+', no leading zeros,
//     no "-0"); doubles accept digits, '.', e/E and signs, and never NaN;
//   - a checker that returns without a quit* call fails;
//   - `pattern` (testlib's small regex language, whole-string match, unescaped spaces ignored).
//     It is matched with std::regex, which backtracks: testlib's greedy matcher rejects a few
//     patterns such as "[0-9]?1" on "1" that this accepts.
#pragma once
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

enum TResult { _ok = 0, _wa = 1, _pe = 2, _fail = 3, _dirt = 4, _points = 5, _unexpected_eof = 8, _partially = 16 };
#define _pc(exitCode) (TResult(_partially + (exitCode)))

enum TMode { _input, _output, _answer };

const int EOFC = -1;
const char LF = '\n', CR = '\r', SPACE = ' ', TAB = '\t';

template <typename C>
inline bool isBlanks(C c) {
  return c == LF || c == CR || c == SPACE || c == TAB;
}

inline std::string __flab_vformat(const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(n > 0 ? n : 0, '\0');
  if (n > 0) std::vsnprintf(&out[0], n + 1, fmt, ap);
  return out;
}

// the printf-style arguments after `fmt`, formatted into a new std::string `out`
#define FLAB_FORMAT(fmt, out)                \
  va_list flab_ap_;                          \
  va_start(flab_ap_, fmt);                   \
  std::string out = __flab_vformat(fmt, flab_ap_); \
  va_end(flab_ap_)

#ifdef __GNUC__
__attribute__((format(printf, 1, 2)))
#endif
inline std::string format(const char* fmt, ...) {
  FLAB_FORMAT(fmt, s);
  return s;
}

template <typename T>
inline std::string vtos(const T& t) {
  std::ostringstream ss;
  ss << t;
  return ss.str();
}
inline std::string vtos(double t) {
  std::ostringstream ss;
  ss.precision(12);
  ss << std::fixed << t;
  return ss.str();
}
template <typename T>
inline std::string toString(const T& t) {
  return vtos(t);
}

inline std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && isBlanks(s[a])) a++;
  while (b > a && isBlanks(s[b - 1])) b--;
  return s.substr(a, b - a);
}
inline std::string upperCase(std::string s) {
  for (auto& c : s) c = char(std::toupper((unsigned char)c));
  return s;
}
inline std::string lowerCase(std::string s) {
  for (auto& c : s) c = char(std::tolower((unsigned char)c));
  return s;
}
inline std::string englishEnding(int x) {
  x %= 100;
  if (x / 10 == 1) return "th";
  int d = x % 10;
  return d == 1 ? "st" : d == 2 ? "nd" : d == 3 ? "rd" : "th";
}
inline std::string compress(const std::string& s) { return s.size() <= 64 ? s : s.substr(0, 30) + "..." + s.substr(s.size() - 31); }
inline std::string __testlib_part(const std::string& s) { return compress(s); }

inline bool __testlib_isNaN(double r) { return std::isnan(r); }
inline bool __testlib_isInfinite(double r) { return r > 1e300 || r < -1e300; }

inline bool doubleCompare(double expected, double result, double maxError) {
  maxError += 1e-15;
  if (__testlib_isNaN(expected)) return __testlib_isNaN(result);
  if (__testlib_isInfinite(expected)) return expected > 0 ? (result > 0 && __testlib_isInfinite(result)) : (result < 0 && __testlib_isInfinite(result));
  if (__testlib_isNaN(result) || __testlib_isInfinite(result)) return false;
  if (std::fabs(result - expected) <= maxError) return true;
  double lo = std::min(expected * (1.0 - maxError), expected * (1.0 + maxError));
  double hi = std::max(expected * (1.0 - maxError), expected * (1.0 + maxError));
  return result >= lo && result <= hi;
}
inline double doubleDelta(double expected, double result) {
  double absolute = std::fabs(result - expected);
  return std::fabs(expected) > 1e-9 ? std::min(absolute, std::fabs(absolute / expected)) : absolute;
}

class pattern {
 public:
  pattern(std::string s) : source(s) {
    std::string re;
    for (size_t i = 0; i < s.size(); i++) {
      if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == ' ') { re += ' '; i++; }
      else if (s[i] != ' ') re += s[i];
    }
    compiled = std::regex(re, std::regex::ECMAScript);
  }
  bool matches(const std::string& s) const { return std::regex_match(s, compiled); }
  std::string src() const { return source; }

 private:
  std::string source;
  std::regex compiled;
};

struct __FlabGuard {
  bool registered = false;
  int quits = 0;
  ~__FlabGuard() {
    if (registered && quits == 0) {
      std::fprintf(stderr, "FAIL Checker must end with quit or quitf call.\n");
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
};
inline __FlabGuard& __flab_guard() {
  static __FlabGuard guard;
  return guard;
}

inline int resultExitCode(TResult r) {
  switch (r) {
    case _ok: return 0;
    case _wa: return 1;
    case _pe: case _dirt: case _unexpected_eof: return 2;
    case _fail: return 3;
    case _points: return 7;
    default: return r >= _partially ? int(r) : 3;
  }
}

struct InStream;
[[noreturn]] void __flab_halt(TResult result, const std::string& msg);

struct InStream {
  std::string data, name;
  size_t pos = 0;
  TMode mode = _input;
  bool opened = false;
  int maxFileSize = INT_MAX, maxTokenLength = 32 << 20, maxMessageLength = 32000;

  void init(const std::string& path, TMode m) {
    mode = m;
    name = m == _input ? "input" : m == _output ? "output" : "answer";
    std::ifstream f(path, std::ios::binary);
    if (!f) __flab_halt(m == _output ? _pe : _fail, "File not found: \"" + path + "\"");
    std::ostringstream ss;
    ss << f.rdbuf();
    data = ss.str();
    opened = true;
  }

  // An error in the input or the answer is the checker's fault; in the output it keeps its verdict.
  [[noreturn]] void quit(TResult r, const std::string& msg) {
    if (mode != _output && r != _fail) __flab_halt(_fail, msg + " (" + name + ")");
    __flab_halt(r, msg);
  }
  [[noreturn]] void quit(TResult r, const char* msg) { quit(r, std::string(msg)); }
#ifdef __GNUC__
  __attribute__((format(printf, 3, 4)))
#endif
  [[noreturn]] void quitf(TResult r, const char* fmt, ...) {
    FLAB_FORMAT(fmt, s);
    quit(r, s);
  }
  void quitif(bool cond, TResult r, const char* fmt, ...) {
    if (!cond) return;
    FLAB_FORMAT(fmt, s);
    quit(r, s);
  }
  void ensuref(bool cond, const char* fmt, ...) {
    if (cond) return;
    FLAB_FORMAT(fmt, s);
    quit(mode == _output ? _wa : _fail, s);
  }

  int curChar() const { return pos < data.size() ? (unsigned char)data[pos] : EOFC; }
  int nextChar() { return pos < data.size() ? (unsigned char)data[pos++] : EOFC; }
  void skipChar() { if (pos < data.size()) pos++; }
  void unreadChar(int c) { if (c != EOFC && pos > 0) pos--; }
  void skipBlanks() { while (pos < data.size() && isBlanks(data[pos])) pos++; }

  bool eof() { return !opened || pos >= data.size(); }
  bool seekEof() { skipBlanks(); return eof(); }
  bool eoln() {
    int c = nextChar();
    if (c == EOFC || c == LF) return true;
    if (c == CR) {
      if (curChar() == LF) { pos++; return true; }
      unreadChar(c);
      return false;
    }
    unreadChar(c);
    return false;
  }
  bool seekEoln() {
    while (curChar() == SPACE || curChar() == TAB) pos++;
    return eoln();
  }
  void readEoln() { if (!eoln()) quit(_pe, "Expected EOLN"); }
  void readEof() { if (!eof()) quit(_pe, "Expected EOF"); }
  void nextLine() { readLine(); }
  char readChar() {
    int c = nextChar();
    if (c == EOFC) quit(_unexpected_eof, "Unexpected end of file - char expected");
    return char(c);
  }
  char readChar(char want) {
    char c = readChar();
    if (c != want) quit(_pe, format("Unexpected character '%c', but '%c' expected", c, want));
    return c;
  }
  char readSpace() { return readChar(' '); }

  void readWordTo(std::string& out) {
    skipBlanks();
    if (curChar() == EOFC) quit(_unexpected_eof, "Unexpected end of file - token expected");
    out.clear();
    while (pos < data.size() && !isBlanks(data[pos])) {
      out += data[pos++];
      if (out.size() > size_t(maxTokenLength)) quit(_pe, "Length of token exceeds the limit, token is '" + compress(out) + "...'");
    }
  }
  std::string readWord() { std::string s; readWordTo(s); return s; }
  std::string readToken() { return readWord(); }
  void readTokenTo(std::string& s) { readWordTo(s); }
  std::string matched(const std::string& s, const pattern& p, const std::string& var, const char* what) {
    if (!p.matches(s))
      quit(_wa, std::string(what) + (var.empty() ? "" : " [name=" + var + "]") + " \"" + compress(s) + "\" doesn't correspond to pattern \"" + p.src() + "\"");
    return s;
  }
  std::string readWord(const pattern& p, const std::string& var = "") { return matched(readWord(), p, var, "Token"); }
  std::string readWord(const std::string& p, const std::string& var = "") { return readWord(pattern(p), var); }
  std::string readToken(const pattern& p, const std::string& var = "") { return readWord(p, var); }
  std::string readToken(const std::string& p, const std::string& var = "") { return readWord(pattern(p), var); }
  void readWordTo(std::string& s, const pattern& p, const std::string& var = "") { s = readWord(p, var); }
  void readTokenTo(std::string& s, const pattern& p, const std::string& var = "") { s = readWord(p, var); }

  void readStringTo(std::string& out) {
    out.clear();
    while (pos < data.size() && data[pos] != LF) {
      if (data[pos] == CR && pos + 1 < data.size() && data[pos + 1] == LF) break;
      out += data[pos++];
    }
    eoln();
  }
  std::string readString() { std::string s; readStringTo(s); return s; }
  std::string readLine() { return readString(); }
  void readLineTo(std::string& s) { readStringTo(s); }
  std::string readString(const pattern& p, const std::string& var = "") { return matched(readString(), p, var, "Line"); }
  std::string readString(const std::string& p, const std::string& var = "") { return readString(pattern(p), var); }
  std::string readLine(const pattern& p, const std::string& var = "") { return readString(p, var); }
  std::string readLine(const std::string& p, const std::string& var = "") { return readString(pattern(p), var); }
  std::vector<std::string> readStrings(int n, int = 1) { std::vector<std::string> v; for (int i = 0; i < n; i++) v.push_back(readString()); return v; }
  std::vector<std::string> readLines(int n, int base = 1) { return readStrings(n, base); }

  long long toLongLong(const std::string& s) {
    bool bad = s.empty() || s.size() > 20;
    size_t start = (s.size() > 1 && s[0] == '-') ? 1 : 0;
    for (size_t i = start; i < s.size() && !bad; i++) bad = s[i] < '0' || s[i] > '9';
    // strict digits: a leading zero only for "0" itself, never "-0"
    if (!bad && s.size() - start > 1 && s[start] == '0') bad = true;
    if (!bad && start == 1 && s == "-0") bad = true;
    long long v = 0;
    if (!bad) {
      errno = 0;
      char* end = nullptr;
      v = std::strtoll(s.c_str(), &end, 10);
      bad = errno == ERANGE || *end != '\0';
    }
    if (bad) quit(_pe, "Expected integer, but \"" + compress(s) + "\" found");
    return v;
  }
  long long readLong() {
    if (seekEof()) quit(_unexpected_eof, "Unexpected end of file - int64 expected");
    return toLongLong(readWord());
  }
  int readInt() {
    if (seekEof()) quit(_unexpected_eof, "Unexpected end of file - int32 expected");
    std::string w = readWord();
    long long v = toLongLong(w);
    if (v < INT_MIN || v > INT_MAX) quit(_pe, "Expected int32, but \"" + compress(w) + "\" found");
    return int(v);
  }
  int readInteger() { return readInt(); }
  template <typename T>
  T inRange(T v, T lo, T hi, const std::string& what, const std::string& var) {
    if (v < lo || v > hi)
      quit(_wa, what + (var.empty() ? "" : " [name=" + var + "]") + " " + vtos(v) + " violates the range [" + vtos(lo) + ", " + vtos(hi) + "]");
    return v;
  }
  long long readLong(long long lo, long long hi, const std::string& var = "") { return inRange(readLong(), lo, hi, "Integer", var); }
  int readInt(int lo, int hi, const std::string& var = "") { return inRange(readInt(), lo, hi, "Integer", var); }
  int readInteger(int lo, int hi, const std::string& var = "") { return readInt(lo, hi, var); }
  std::vector<int> readInts(int n, int lo, int hi, const std::string& var = "", int = 1) { std::vector<int> v; for (int i = 0; i < n; i++) v.push_back(readInt(lo, hi, var)); return v; }
  std::vector<int> readInts(int n, int = 1) { std::vector<int> v; for (int i = 0; i < n; i++) v.push_back(readInt()); return v; }
  std::vector<long long> readLongs(int n, long long lo, long long hi, const std::string& var = "", int = 1) { std::vector<long long> v; for (int i = 0; i < n; i++) v.push_back(readLong(lo, hi, var)); return v; }
  std::vector<long long> readLongs(int n, int = 1) { std::vector<long long> v; for (int i = 0; i < n; i++) v.push_back(readLong()); return v; }

  double toDouble(const std::string& s) {
    int digits = 0, minus = 0, plus = 0, points = 0, exps = 0;
    for (char c : s) {
      if (c >= '0' && c <= '9') digits++;
      else if (c == '-') minus++;
      else if (c == '+') plus++;
      else if (c == '.') points++;
      else if (c == 'e' || c == 'E') exps++;
      else quit(_pe, "Expected double, but \"" + compress(s) + "\" found");
    }
    if (digits == 0 || minus > 2 || plus > 2 || points > 1 || exps > 1) quit(_pe, "Expected double, but \"" + compress(s) + "\" found");
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0' || std::isnan(v)) quit(_pe, "Expected double, but \"" + compress(s) + "\" found");
    return v;
  }
  double readReal() {
    if (seekEof()) quit(_unexpected_eof, "Unexpected end of file - double expected");
    return toDouble(readWord());
  }
  double readDouble() { return readReal(); }
  double readReal(double lo, double hi, const std::string& var = "") { return inRange(readReal(), lo, hi, "Double", var); }
  double readDouble(double lo, double hi, const std::string& var = "") { return readReal(lo, hi, var); }
  std::vector<double> readDoubles(int n, int = 1) { std::vector<double> v; for (int i = 0; i < n; i++) v.push_back(readDouble()); return v; }
  std::vector<double> readReals(int n, int = 1) { return readDoubles(n); }
  double readStrictReal(double lo, double hi, int minAfter, int maxAfter, const std::string& var = "") {
    if (seekEof()) quit(_unexpected_eof, "Unexpected end of file - strict double expected");
    std::string w = readWord();
    size_t dot = w.find('.');
    int after = dot == std::string::npos ? 0 : int(w.size() - dot - 1);
    bool digitsOnly = !w.empty() && w.find_first_not_of("-0123456789.") == std::string::npos;
    if (!digitsOnly || after < minAfter || after > maxAfter || (dot != std::string::npos && after == 0))
      quit(_pe, "Expected strict double with [" + vtos(minAfter) + ", " + vtos(maxAfter) + "] digits after the point, but \"" + compress(w) + "\" found");
    return inRange(toDouble(w), lo, hi, "Double", var);
  }
  double readStrictDouble(double lo, double hi, int minAfter, int maxAfter, const std::string& var = "") { return readStrictReal(lo, hi, minAfter, maxAfter, var); }
  void close() {}
};

inline InStream inf, ouf, ans;

// testlib: accepting (or points) with output left over is "Extra information in the output file".
[[noreturn]] inline void __flab_halt(TResult result, const std::string& msg) {
  __flab_guard().quits++;
  if ((result == _ok || result == _points || result >= _partially) && ouf.opened && !ouf.seekEof())
    __flab_halt(_dirt, "Extra information in the output file");
  const char* what = result == _ok ? "ok" : result == _wa ? "wrong answer" : result == _pe || result == _dirt || result == _unexpected_eof ? "wrong output format"
                   : result == _fail ? "FAIL" : result == _points ? "points" : "partially correct";
  std::fprintf(stderr, "%s %s\n", what, trim(msg).c_str());
  std::fflush(stderr);
  std::_Exit(resultExitCode(result));
}

[[noreturn]] inline void quit(TResult r, const std::string& msg) { __flab_halt(r, msg); }
[[noreturn]] inline void quit(TResult r, const char* msg) { __flab_halt(r, msg); }
#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
[[noreturn]] inline void quitf(TResult r, const char* fmt, ...) {
  FLAB_FORMAT(fmt, s);
  __flab_halt(r, s);
}
inline void quitif(bool cond, TResult r, const char* fmt, ...) {
  if (!cond) return;
  FLAB_FORMAT(fmt, s);
  __flab_halt(r, s);
}
// testlib refuses points that are NaN, infinite, negative or above 1e6 (a checker failure).
inline double __flab_points(double points) {
  if (__testlib_isNaN(points)) __flab_halt(_fail, "Parameter 'points' can't be nan");
  if (__testlib_isInfinite(points)) __flab_halt(_fail, "Parameter 'points' can't be infinite");
  if (points < -1e-8) __flab_halt(_fail, "Parameter 'points' can't be negative");
  if (points > 1e6 + 1e-8) __flab_halt(_fail, "Parameter 'points' can't be greater than 1E6");
  return points <= 0.0 ? 0.0 : std::min(points, 1e6);
}
[[noreturn]] inline void quitp(double points, const std::string& msg = "") { __flab_halt(_points, vtos(__flab_points(points)) + " " + msg); }
#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
[[noreturn]] inline void quitp(double points, const char* fmt, ...) {
  FLAB_FORMAT(fmt, s);
  __flab_halt(_points, vtos(__flab_points(points)) + " " + s);
}
[[noreturn]] inline void quitp(int points, const char* fmt, ...) {
  FLAB_FORMAT(fmt, s);
  __flab_halt(_points, vtos(int(__flab_points(points))) + " " + s);
}
[[noreturn]] inline void quitpi(const std::string& points_info, const std::string& message = "") {
  if (points_info.find(' ') != std::string::npos) __flab_halt(_fail, "Parameter 'points_info' can't contain spaces");
  __flab_halt(_points, points_info + " " + message);
}
inline void ensuref(bool cond, const char* fmt, ...) {
  if (cond) return;
  FLAB_FORMAT(fmt, s);
  __flab_halt(_fail, s);
}
#define ensure(cond) ensuref((cond), "%s", "ensure(" #cond ") failed")

inline std::string __flab_checker_name;
inline void setName(const char* fmt, ...) {
  FLAB_FORMAT(fmt, name);
  __flab_checker_name = name;
}

inline long long stringToLongLong(InStream& in, const char* s) { return in.toLongLong(s); }
inline long long stringToLongLong(InStream& in, const std::string& s) { return in.toLongLong(s); }
inline double stringToDouble(InStream& in, const char* s) { return in.toDouble(s); }
inline double stringToDouble(InStream& in, const std::string& s) { return in.toDouble(s); }

inline void registerTestlibCmd(int argc, char* argv[]) {
  __flab_guard().registered = true;
  std::vector<std::string> args;
  for (int i = 1; i < argc; i++) {
    if ((!std::strcmp(argv[i], "--testset") || !std::strcmp(argv[i], "--group")) && i + 1 < argc) { i++; continue; }
    args.push_back(argv[i]);
  }
  if (args.size() < 3 || args.size() > 5) __flab_halt(_fail, "Program must be run with <input-file> <output-file> <answer-file>");
  inf.init(args[0], _input);
  ouf.init(args[1], _output);
  ans.init(args[2], _answer);
}
