// SPDX-License-Identifier: GPL-2.0
// torch_npu's C++ half: what PyTorch's PrivateUse1 backend needs below
// Python. Device memory comes from a Python callback (the caching allocator
// over davinci HBM buffers, torch_npu/memory.py) that returns the buffer's
// address in this process's mapping, so an npu tensor's data pointer is host
// addressable; compute kernels are Python (torch_npu/_kernels.py) and submit
// davinci tasks by device address. This file holds: the allocator shim, the
// device guard (current device per thread), the view/resize/set kernels that
// only touch TensorImpl metadata, host_view() (a CPU tensor aliasing an npu
// tensor's memory) and the binary ops' common case; fallback.cpp holds the
// CPU fallback.
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <string>

#include "npu.h"

namespace py = pybind11;

namespace {

using torch_npu::kNpu;

// Set once by torch_npu at import; leaked so that nothing runs their
// destructors after the interpreter is gone.
py::object *g_alloc_fn;
py::object *g_free_fn;
c10::DeviceIndex g_device_count;
thread_local c10::DeviceIndex t_device;

void check_index(c10::DeviceIndex index)
{
	TORCH_CHECK(index >= 0 && index < g_device_count,
		    "npu error: invalid device ordinal: npu:", int(index),
		    " requested but there ", g_device_count == 1 ? "is " : "are ",
		    int(g_device_count), " npu device",
		    g_device_count == 1 ? "" : "s",
		    " (valid: 0..", int(g_device_count) - 1, ")");
}

bool python_alive()
{
	return Py_IsInitialized() && !_Py_IsFinalizing();
}

// The allocator's hooks can run while a Python exception is pending (a
// tensor freed as an op's error unwinds to the interpreter): calling into
// Python then fails and the block is lost, so each hook sets the pending
// error aside for its call (py::error_scope) and restores it after.
void npu_free(void *ptr)
{
	if (!ptr || !g_free_fn || !python_alive())
		return;	// closing the device context frees the HBM
	py::gil_scoped_acquire gil;
	py::error_scope pending;
	try {
		(*g_free_fn)(reinterpret_cast<uintptr_t>(ptr));
	} catch (py::error_already_set &e) {
		e.discard_as_unraisable("torch_npu: freeing npu memory");
	}
}

struct NpuAllocator final : c10::Allocator {
	c10::DataPtr allocate(size_t nbytes) override
	{
		c10::Device dev(kNpu, t_device);
		if (nbytes == 0)
			return {nullptr, nullptr, &npu_free, dev};
		TORCH_CHECK(g_alloc_fn, "torch_npu is not initialised");
		uintptr_t addr = 0;
		std::string oom;
		{
			py::gil_scoped_acquire gil;
			py::error_scope pending;
			try {
				py::object r = (*g_alloc_fn)(nbytes, int(t_device));
				if (py::isinstance<py::str>(r))
					oom = r.cast<std::string>();
				else
					addr = r.cast<uintptr_t>();
			} catch (py::error_already_set &e) {
				TORCH_CHECK(false, "npu allocation of ", nbytes,
					    " bytes failed: ", e.what());
			}
		}
		TORCH_CHECK_WITH(OutOfMemoryError, oom.empty(), oom);
		void *p = reinterpret_cast<void *>(addr);
		return {p, p, &npu_free, dev};
	}

	c10::DeleterFnPtr raw_deleter() const override
	{
		return &npu_free;
	}

	void copy_data(void *dest, const void *src,
		       std::size_t count) const override
	{
		default_copy_data(dest, src, count);
	}
};

NpuAllocator g_allocator;

// The current device per thread, as CUDA's guard keeps it. Streams and
// events are torch_npu's Python objects over davinci streams; the guard
// reports the default stream, so the autograd engine never needs to order
// streams for us.
struct NpuGuard final : c10::impl::DeviceGuardImplInterface {
	c10::DeviceType type() const override
	{
		return kNpu;
	}
	c10::Device exchangeDevice(c10::Device d) const override
	{
		c10::Device old = getDevice();
		setDevice(d);
		return old;
	}
	c10::Device getDevice() const override
	{
		return {kNpu, t_device};
	}
	void setDevice(c10::Device d) const override
	{
		TORCH_CHECK(d.type() == kNpu, "not an npu device: ", d);
		check_index(d.index());
		t_device = d.index();
	}
	void uncheckedSetDevice(c10::Device d) const noexcept override
	{
		t_device = d.index();
	}
	c10::Stream getStream(c10::Device d) const noexcept override
	{
		return c10::Stream(c10::Stream::DEFAULT, d);
	}
	c10::Stream getDefaultStream(c10::Device d) const override
	{
		return c10::Stream(c10::Stream::DEFAULT, d);
	}
	c10::Stream exchangeStream(c10::Stream s) const noexcept override
	{
		return c10::Stream(c10::Stream::DEFAULT, s.device());
	}
	c10::DeviceIndex deviceCount() const noexcept override
	{
		return g_device_count;
	}
	// Generic torch.Event(device="npu") is not backed by davinci events:
	// say so instead of recording nothing and reporting it complete.
	static constexpr const char *kNoGenericEvent =
		"torch.Event(device='npu') is not supported by torch_npu: use "
		"torch.npu.Event (a davinci event; record/wait/query/"
		"synchronize/elapsed_time) and torch.npu.Stream";
	void record(void **, const c10::Stream &, const c10::DeviceIndex,
		    const c10::EventFlag) const override
	{
		TORCH_CHECK(false, kNoGenericEvent);
	}
	void block(void *event, const c10::Stream &) const override
	{
		TORCH_CHECK(!event, kNoGenericEvent);
	}
	bool queryEvent(void *event) const override
	{
		TORCH_CHECK(!event, kNoGenericEvent);
		return true;
	}
	void synchronizeEvent(void *event) const override
	{
		TORCH_CHECK(!event, kNoGenericEvent);
	}
	double elapsedTime(void *, void *, const c10::DeviceIndex) const override
	{
		TORCH_CHECK(false, kNoGenericEvent);
	}
	void destroyEvent(void *, const c10::DeviceIndex) const noexcept override
	{
	}
	bool queryStream(const c10::Stream &) const override
	{
		return true;
	}
	void synchronizeStream(const c10::Stream &) const override
	{
	}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuard);

at::Tensor empty_memory_format(c10::IntArrayRef size,
			       std::optional<c10::ScalarType> dtype,
			       std::optional<c10::Layout> layout,
			       std::optional<c10::Device> device,
			       std::optional<bool> pin_memory,
			       std::optional<c10::MemoryFormat> memory_format)
{
	c10::DeviceGuard guard(c10::device_or_default(device));
	TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
		    "npu tensors are strided only");
	return at::detail::empty_generic(size, &g_allocator,
					 c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
					 c10::dtype_or_default(dtype),
					 memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
			 std::optional<c10::ScalarType> dtype,
			 std::optional<c10::Layout> layout,
			 std::optional<c10::Device> device,
			 std::optional<bool> pin_memory)
{
	c10::DeviceGuard guard(c10::device_or_default(device));
	TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
		    "npu tensors are strided only");
	return at::detail::empty_strided_generic(size, stride, &g_allocator,
						 c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
						 c10::dtype_or_default(dtype));
}

at::Tensor as_strided(const at::Tensor &self, c10::IntArrayRef size,
		      c10::IntArrayRef stride,
		      std::optional<int64_t> storage_offset)
{
	return at::native::as_strided_tensorimpl(self, size, stride,
						 storage_offset);
}

at::Tensor view(const at::Tensor &self, c10::IntArrayRef size)
{
	return at::native::view(self, size);
}

at::Tensor reshape_alias(const at::Tensor &self, c10::IntArrayRef size,
			 c10::IntArrayRef stride)
{
	return at::native::_reshape_alias(self, size, stride);
}

const at::Tensor &resize(const at::Tensor &self, c10::IntArrayRef size,
			 std::optional<at::MemoryFormat> memory_format)
{
	c10::DeviceGuard guard(self.device());
	return at::native::resize_(self, size, memory_format);
}

at::Tensor &set_tensor(at::Tensor &self, const at::Tensor &src)
{
	return at::native::set_tensor_(self, src);
}

at::Tensor &set_storage(at::Tensor &self, at::Storage src)
{
	return at::native::set_(self, src);
}

at::Tensor &set_storage_offset(at::Tensor &self, at::Storage src,
			       int64_t offset, c10::IntArrayRef size,
			       c10::IntArrayRef stride)
{
	return at::cpu::set_(self, src, offset, size, stride);
}

// The binary ops' common case: two contiguous npu tensors of one shape and
// a dtype the device computes in, each starting at its block (storage
// offset 0), alpha 1. It takes one Python call, which launches the task
// (torch_npu/_device_ops.py: launch_blocks), instead of the Python kernel's
// dispatch, checks and the allocator's round trip through Python. Every
// other case, and every call while a davinci trace runs (for its aten::
// spans), goes to the Python kernel (torch_npu/_kernels.py).
enum BinaryOp { kAdd, kSub, kMul, kDiv, kBinaryOps };
const char *const kBinaryNames[kBinaryOps] = {"add", "sub", "mul", "div"};
py::object *g_binary_kernels[kBinaryOps];
py::object *g_binary_names[kBinaryOps];
py::object *g_launch_blocks;
py::object *g_active_recorder;

bool device_dtype(c10::ScalarType t, bool floats_only)
{
	switch (t) {
	case c10::kFloat:
	case c10::kHalf:
	case c10::kBFloat16:
		return true;
	case c10::kInt:
		return !floats_only;
	default:
		return false;
	}
}

bool binary_common_case(const at::Tensor &a, const at::Tensor &b,
			bool floats_only)
{
	return a.device().type() == kNpu && b.device() == a.device() &&
	       b.scalar_type() == a.scalar_type() &&
	       device_dtype(a.scalar_type(), floats_only) &&
	       a.sizes() == b.sizes() && a.numel() > 0 &&
	       a.is_contiguous() && b.is_contiguous() &&
	       a.storage_offset() == 0 && b.storage_offset() == 0;
}

at::Tensor binary_tensor(BinaryOp op, const at::Tensor &self,
			 const at::Tensor &other, const c10::Scalar &alpha)
{
	py::gil_scoped_acquire gil;
	TORCH_CHECK(g_launch_blocks, "torch_npu's kernels are not registered");
	bool alpha_one = !alpha.isComplex() && !alpha.isSymbolic() &&
			 alpha.toDouble() == 1.0;
	if (alpha_one && binary_common_case(self, other, op == kDiv) &&
	    (*g_active_recorder)().is_none()) {
		at::Tensor out = at::empty_like(self);
		(*g_launch_blocks)(*g_binary_names[op], self.scalar_type(),
				   int(self.device().index()), self.numel(),
				   reinterpret_cast<uintptr_t>(out.data_ptr()),
				   reinterpret_cast<uintptr_t>(self.data_ptr()),
				   reinterpret_cast<uintptr_t>(other.data_ptr()));
		return out;
	}
	// arguments as PyTorch hands them to a Python kernel: a wrapped
	// number (rsub's scalar) as a Python number
	using torch::jit::toPyObject;
	py::object &kernel = *g_binary_kernels[op];
	py::object r = op == kAdd || op == kSub ?
		kernel(toPyObject(self), toPyObject(other),
		       py::arg("alpha") = toPyObject(alpha)) :
		kernel(toPyObject(self), toPyObject(other));
	return r.cast<at::Tensor>();
}

at::Tensor add_tensor(const at::Tensor &self, const at::Tensor &other,
		      const c10::Scalar &alpha)
{
	return binary_tensor(kAdd, self, other, alpha);
}

at::Tensor sub_tensor(const at::Tensor &self, const at::Tensor &other,
		      const c10::Scalar &alpha)
{
	return binary_tensor(kSub, self, other, alpha);
}

at::Tensor mul_tensor(const at::Tensor &self, const at::Tensor &other)
{
	return binary_tensor(kMul, self, other, 1);
}

at::Tensor div_tensor(const at::Tensor &self, const at::Tensor &other)
{
	return binary_tensor(kDiv, self, other, 1);
}

// The Python kernels of add/sub/mul/div.Tensor (by name), the launcher of
// the common case and davinci.trace.spans.active_recorder; set once.
void set_binary_kernels(py::dict kernels, py::object launch_blocks,
			py::object active_recorder)
{
	TORCH_CHECK(!g_launch_blocks, "binary kernels are registered already");
	for (int op = 0; op < kBinaryOps; op++) {
		py::str name(kBinaryNames[op]);
		TORCH_CHECK(kernels.contains(name), "no Python kernel for ",
			    kBinaryNames[op], ".Tensor");
		g_binary_kernels[op] = new py::object(kernels[name]);
		g_binary_names[op] = new py::object(name);
	}
	g_active_recorder = new py::object(std::move(active_recorder));
	g_launch_blocks = new py::object(std::move(launch_blocks));
}

void init(py::object alloc_fn, py::object free_fn, int device_count)
{
	TORCH_CHECK(!g_alloc_fn, "torch_npu is initialised already");
	g_alloc_fn = new py::object(std::move(alloc_fn));
	g_free_fn = new py::object(std::move(free_fn));
	g_device_count = static_cast<c10::DeviceIndex>(device_count);
	c10::SetAllocator(kNpu, &g_allocator);
}

int current_device()
{
	return t_device;
}

void set_device(int index)
{
	check_index(static_cast<c10::DeviceIndex>(index));
	t_device = static_cast<c10::DeviceIndex>(index);
}

} // namespace

at::Tensor torch_npu::host_view(const at::Tensor &t)
{
	TORCH_CHECK(t.device().type() == kNpu, "host_view takes an npu tensor");
	c10::Storage keep = t.storage();
	at::Tensor view = at::from_blob(t.data_ptr(), t.sizes(), t.strides(),
					[keep](void *) {},
					t.options().device(at::kCPU));
	view._set_conj(t.is_conj());
	view._set_neg(t.is_neg());
	return view;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", empty_memory_format);
	m.impl("empty_strided", empty_strided);
	m.impl("as_strided", as_strided);
	m.impl("view", view);
	m.impl("_reshape_alias", reshape_alias);
	m.impl("resize_", resize);
	m.impl("set_.source_Tensor", set_tensor);
	m.impl("set_.source_Storage", set_storage);
	m.impl("set_.source_Storage_storage_offset", set_storage_offset);
}

// The binary ops' common case in C++, the rest in their Python kernels.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("add.Tensor", add_tensor);
	m.impl("sub.Tensor", sub_tensor);
	m.impl("mul.Tensor", mul_tensor);
	m.impl("div.Tensor", div_tensor);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
	m.def("init", &init, "register the allocator callbacks and device count");
	m.def("host_view", &torch_npu::host_view, "CPU tensor aliasing an npu tensor");
	m.def("fallback_ops", &torch_npu::fallback_ops, "ops that ran on the CPU so far");
	m.def("set_quiet", &torch_npu::set_quiet, "silence fallback warnings (thread)");
	m.def("current_device", &current_device);
	m.def("set_device", &set_device);
	m.def("set_binary_kernels", &set_binary_kernels,
	      "the Python side of add/sub/mul/div.Tensor");
}
