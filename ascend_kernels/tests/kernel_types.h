// The kernel dtypes' C types as a GoogleTest type list, from the dtype table: a typed test over
// KernelTypes covers every row.
#pragma once

#include <tuple>

#include <gtest/gtest.h>
#include "kernel_fixture.h"

namespace kt {

template <typename Tuple>
struct TypesOf;
template <typename... T>
struct TypesOf<std::tuple<T...>> {
  using Type = ::testing::Types<T...>;
};

#define KT_TUPLE_OF(Name, name, code, type, ...) std::tuple<type>(),
using KernelTypes = TypesOf<decltype(std::tuple_cat(ASCEND_KERNELS_KERNEL_DTYPES(KT_TUPLE_OF)
                                                        std::tuple<>()))>::Type;
#undef KT_TUPLE_OF

// Names typed tests by the dtype's name ("float32").
struct DTypeName {
  template <typename T>
  static std::string GetName(int) {
    return Traits<T>::kName;
  }
};

}  // namespace kt
