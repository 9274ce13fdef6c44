#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "test_harness.h"

namespace test {
namespace {
int g_failures = 0;
}

std::vector<Case>& Registry() {
  static std::vector<Case> cases;
  return cases;
}

void Fail(const char* file, int line, const std::string& what) {
  ++g_failures;
  std::fprintf(stderr, "%s:%d: FAILED %s\n", file, line, what.c_str());
}

bool DiesWithAbort(const std::function<void()>& fn, const std::string& expected, std::string* stderr_text) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    fn();
    _exit(0);  // survived: the parent reports the missing abort
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(got));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *stderr_text = text;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && text.find(expected) != std::string::npos;
}

}  // namespace test

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  int ran = 0;
  for (const auto& c : test::Registry()) {
    if (filter && std::strstr(c.name, filter) == nullptr) continue;
    const int before = test::g_failures;
    c.fn();
    ++ran;
    std::printf("[%s] %s\n", test::g_failures == before ? "  OK  " : "FAILED", c.name);
  }
  std::printf("%d tests, %d failed checks\n", ran, test::g_failures);
  return test::g_failures == 0 && ran > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
