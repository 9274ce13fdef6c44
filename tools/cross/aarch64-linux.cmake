# CMake toolchain for Linux aarch64 from an x86-64 host (tools/cross/aarch64.sh). The compilers
# come from CC / CXX (Debian's aarch64-linux-gnu-g++ for the tests, zig's clang for the wheels);
# AARCH64_SYSROOT is the target's root that aarch64.sh unpacks: GoogleTest's CMake config is
# found there, and programs built here (test discovery, ctest) run in it under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(AARCH64_SYSROOT "$ENV{AARCH64_SYSROOT}" CACHE PATH "The target's root (Debian arm64 packages)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES AARCH64_SYSROOT)
if(AARCH64_SYSROOT)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L "${AARCH64_SYSROOT}")
  set(GTest_DIR "${AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/cmake/GTest" CACHE PATH "")
endif()
# Binutils that read aarch64 objects (`cmake --install --strip`, nanobind's strip step).
find_program(AARCH64_STRIP NAMES aarch64-linux-gnu-strip llvm-strip)
if(AARCH64_STRIP)
  set(CMAKE_STRIP "${AARCH64_STRIP}" CACHE FILEPATH "")
endif()
