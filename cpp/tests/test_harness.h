// A minimal test harness (no downloads): TEST(name) registers a function, CHECK* record failures
// and continue, main() runs every test and returns nonzero if any check failed.
#pragma once

#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace test_harness {

struct Registry {
  std::vector<std::pair<std::string, std::function<void()>>> tests;
  int failures = 0;
  static Registry& Get() {
    static Registry r;
    return r;
  }
};

struct Register {
  Register(const char* name, std::function<void()> fn) {
    Registry::Get().tests.emplace_back(name, std::move(fn));
  }
};

inline void Fail(const char* file, int line, const std::string& what) {
  ++Registry::Get().failures;
  std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
}

template <class A, class B>
void CheckEq(const A& a, const B& b, const char* as, const char* bs, const char* file, int line) {
  if (!(a == b)) {
    std::ostringstream os;
    os << as << " == " << bs << " (" << a << " vs " << b << ")";
    Fail(file, line, os.str());
  }
}

inline int RunAll() {
  for (auto& [name, fn] : Registry::Get().tests) {
    const int before = Registry::Get().failures;
    fn();
    std::fprintf(stderr, "[%s] %s\n", Registry::Get().failures == before ? "  OK  " : "FAILED",
                 name.c_str());
  }
  const int failures = Registry::Get().failures;
  std::fprintf(stderr, "%zu tests, %d failed checks\n", Registry::Get().tests.size(), failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace test_harness

#define TEST(name)                                                        \
  static void name();                                                     \
  static ::test_harness::Register name##_registration(#name, &name);      \
  static void name()

#define CHECK(cond) \
  ((cond) ? (void)0 : ::test_harness::Fail(__FILE__, __LINE__, #cond))
#define CHECK_EQ(a, b) ::test_harness::CheckEq((a), (b), #a, #b, __FILE__, __LINE__)

#define TEST_MAIN() \
  int main() { return ::test_harness::RunAll(); }
