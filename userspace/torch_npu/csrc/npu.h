// SPDX-License-Identifier: GPL-2.0
// What torch_npu's C++ files share: the device type, host views of npu
// memory, and the CPU fallback's state.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <string>
#include <vector>

namespace torch_npu {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;

// A CPU tensor over the same memory as an npu tensor (sizes, strides,
// offset and the conjugate and negative bits); it keeps the npu storage
// alive. Callers synchronise the device before reading or writing it.
at::Tensor host_view(const at::Tensor &t);

// The boxed CPU fallback of every op without an npu kernel (fallback.cpp).
void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack);

// Ops that ran through the fallback so far, sorted.
std::vector<std::string> fallback_ops();

// No fallback warnings in this thread while quiet (printing a tensor).
void set_quiet(bool quiet);

} // namespace torch_npu
