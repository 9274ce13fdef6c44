"""The system's GoogleTest (Debian's googletest / libgtest-dev) as @system_gtest, offline.

The same copy the CMake build finds with find_package(GTest): headers under <prefix>/include/gtest,
static libraries libgtest.a and libgtest_main.a under <prefix>/lib or a multiarch subdirectory.
$GTEST_ROOT (a --repo_env) names another prefix. Targets: @system_gtest//:gtest and
@system_gtest//:gtest_main (with main(), what a cc_test of GoogleTest tests depends on).
"""

_BUILD = """\
cc_library(
    name = "gtest",
    hdrs = glob(["include/gtest/**/*.h"]),
    includes = ["include"],
    srcs = ["lib/libgtest.a"],
    linkopts = ["-pthread"],
    visibility = ["//visibility:public"],
)

cc_library(
    name = "gtest_main",
    srcs = ["lib/libgtest_main.a"],
    deps = [":gtest"],
    visibility = ["//visibility:public"],
)
"""

def _find_lib(ctx, prefix, name):
    for d in [prefix + "/lib", prefix + "/lib64"]:
        path = ctx.path(d + "/" + name)
        if path.exists:
            return path
        found = ctx.execute(["sh", "-c", "ls -1 %s/*/%s 2>/dev/null | head -n 1" % (d, name)])
        if found.return_code == 0 and found.stdout.strip():
            return ctx.path(found.stdout.strip())
    return None

def _system_gtest_impl(ctx):
    prefixes = [ctx.os.environ["GTEST_ROOT"]] if ctx.os.environ.get("GTEST_ROOT") else ["/usr", "/usr/local"]
    for prefix in prefixes:
        headers = ctx.path(prefix + "/include/gtest")
        gtest = _find_lib(ctx, prefix, "libgtest.a")
        gtest_main = _find_lib(ctx, prefix, "libgtest_main.a")
        if headers.exists and gtest and gtest_main:
            ctx.symlink(headers, "include/gtest")
            ctx.symlink(gtest, "lib/libgtest.a")
            ctx.symlink(gtest_main, "lib/libgtest_main.a")
            ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
            ctx.file("BUILD.bazel", _BUILD)
            return
    fail("GoogleTest not found under %s (include/gtest, lib*/libgtest.a, libgtest_main.a): " % prefixes +
         "install Debian's googletest / libgtest-dev, or pass --repo_env=GTEST_ROOT=<prefix>")

system_gtest_repository = repository_rule(
    implementation = _system_gtest_impl,
    environ = ["GTEST_ROOT"],
    local = True,
)
