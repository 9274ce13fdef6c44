// The kernel dtypes' C types as a GoogleTest type list, from the dtype table: a typed test over
// KernelTypes covers every row a kernel runs.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include <gtest/gtest.h>
#include "kernel_fixture.h"

namespace kt {

template <typename Tuple>
struct TypesOf;
template <typename... T>
struct TypesOf<std::tuple<T...>> {
  using Type = ::testing::Types<T...>;
};

template <size_t... I>
auto KernelCTypes(std::index_sequence<I...>) -> decltype(std::tuple_cat(
    std::conditional_t<ascend_kernels::kDtypes[I].ub_divisor != 0,
                       std::tuple<ascend_kernels::CType<ascend_kernels::kDtypes[I].dtype>>,
                       std::tuple<>>()...));
using KernelTypes =
    TypesOf<decltype(KernelCTypes(std::make_index_sequence<ascend_kernels::kDtypeCount>()))>::Type;

// Names typed tests by the dtype's name ("float32").
struct DTypeName {
  template <typename T>
  static std::string GetName(int) {
    return Traits<T>::kName;
  }
};

}  // namespace kt
