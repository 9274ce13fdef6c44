"""The `offline` config: local stand-ins for Bazel's implicit repositories.

Bazel 4's @bazel_tools loads @rules_cc, @rules_java and @remote_coverage_tools, which the default
WORKSPACE suffix downloads. `--config=offline` sets --repo_env=JAX_THRESHOLD_BAZEL_OFFLINE=1; then
WORKSPACE declares those names as the tiny re-exporting repositories under
third_party/bazel_offline/, before the default suffix would (it only fills in names left unset).
Without the setting nothing is declared and Bazel fetches the real rule sets as usual.

(--override_repository would need an absolute path, which a checked-in .bazelrc cannot give.)
"""

_ENV = "JAX_THRESHOLD_BAZEL_OFFLINE"

def _offline_setting_impl(ctx):
    offline = ctx.os.environ.get(_ENV, "") not in ("", "0")
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    ctx.file("BUILD.bazel", "")
    ctx.file("defs.bzl", "OFFLINE = %s\n" % offline)

# Publishes the value of $JAX_THRESHOLD_BAZEL_OFFLINE (from --repo_env) as OFFLINE in
# @<name>//:defs.bzl, so WORKSPACE can depend on it.
offline_setting = repository_rule(
    implementation = _offline_setting_impl,
    environ = [_ENV],
    local = True,
)

_STAND_INS = ["rules_cc", "rules_java", "remote_coverage_tools"]

def offline_repositories(offline):
    """Declares the stand-ins when `offline`; to be called from WORKSPACE."""
    if not offline:
        return
    for name in _STAND_INS:
        native.local_repository(
            name = name,
            path = "third_party/bazel_offline/" + name,
        )
