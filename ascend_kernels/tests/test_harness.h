// A tiny test harness: TEST(name) registers a function, CHECK* record failures and go on,
// EXPECT_ABORT runs a statement in a forked child and expects it to die of SIGABRT with a given
// message on stderr (the CPU AscendC precondition checks).
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace test {

struct Case {
  const char* name;
  std::function<void()> fn;
};
std::vector<Case>& Registry();
void Fail(const char* file, int line, const std::string& what);
// Runs `fn` in a child process; true when it aborted and its stderr contains `expected`.
bool DiesWithAbort(const std::function<void()>& fn, const std::string& expected, std::string* stderr_text);

struct Registrar {
  Registrar(const char* name, std::function<void()> fn) { Registry().push_back({name, std::move(fn)}); }
};

}  // namespace test

#define TEST(name)                                                   \
  static void name();                                                \
  static ::test::Registrar name##_registrar(#name, name);            \
  static void name()

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) ::test::Fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define CHECK_MSG(cond, msg)                                                         \
  do {                                                                               \
    if (!(cond)) ::test::Fail(__FILE__, __LINE__, std::string("CHECK(" #cond "): ") + (msg)); \
  } while (0)

#define EXPECT_ABORT(statement, expected)                                                        \
  do {                                                                                           \
    std::string _err;                                                                            \
    if (!::test::DiesWithAbort([&] { statement; }, expected, &_err))                             \
      ::test::Fail(__FILE__, __LINE__, "expected abort with \"" + std::string(expected) +        \
                                           "\"; child stderr: " + _err);                        \
  } while (0)
