// SPDX-License-Identifier: GPL-2.0
// torch_npu's C++ half: what PyTorch's PrivateUse1 backend needs below
// Python. Device memory comes from a Python callback (the caching allocator
// over davinci HBM buffers, torch_npu/memory.py) that returns the buffer's
// address in this process's mapping, so an npu tensor's data pointer is host
// addressable; compute kernels are Python (torch_npu/_kernels.py) and submit
// davinci tasks by device address. This file holds: the allocator shim, the
// device guard (current device per thread), the view/resize/set kernels that
// only touch TensorImpl metadata, the CPU fallback with its one-time
// warning, and host_view() (a CPU tensor aliasing an npu tensor's memory).
#include <ATen/EmptyTensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <mutex>
#include <set>
#include <string>

namespace py = pybind11;

namespace {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;

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

void npu_free(void *ptr)
{
	if (!ptr || !g_free_fn || !python_alive())
		return;	// closing the device context frees the HBM
	py::gil_scoped_acquire gil;
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

std::mutex g_warned_lock;
std::set<std::string> g_warned;
thread_local bool t_quiet;

void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const auto &name = op.schema().operator_name();
	std::string full = name.name;
	if (!name.overload_name.empty())
		full += "." + name.overload_name;
	bool first = false;
	if (!t_quiet) {
		std::lock_guard<std::mutex> lock(g_warned_lock);
		first = g_warned.insert(full).second;
	}
	if (first)
		TORCH_WARN("torch_npu: ", full, " has no davinci device kernel: ",
			   "it runs on the CPU (inputs copied out, results ",
			   "copied back); this warning is shown once per op");
	at::native::cpu_fallback(op, stack);
}

// A CPU tensor over the same memory as an npu tensor (same sizes, strides
// and offset); it keeps the npu storage alive. Callers synchronise the
// device before reading it and before writing through it.
at::Tensor host_view(const at::Tensor &t)
{
	TORCH_CHECK(t.device().type() == kNpu, "host_view takes an npu tensor");
	c10::Storage keep = t.storage();
	return at::from_blob(t.data_ptr(), t.sizes(), t.strides(),
			     [keep](void *) {}, t.options().device(at::kCPU));
}

std::vector<std::string> fallback_ops()
{
	std::lock_guard<std::mutex> lock(g_warned_lock);
	return {g_warned.begin(), g_warned.end()};
}

void init(py::object alloc_fn, py::object free_fn, int device_count)
{
	TORCH_CHECK(!g_alloc_fn, "torch_npu is initialised already");
	g_alloc_fn = new py::object(std::move(alloc_fn));
	g_free_fn = new py::object(std::move(free_fn));
	g_device_count = static_cast<c10::DeviceIndex>(device_count);
	c10::SetAllocator(kNpu, &g_allocator);
}

// Fallbacks while quiet (printing a tensor) neither warn nor count as
// warned.
void set_quiet(bool quiet)
{
	t_quiet = quiet;
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

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
	m.def("init", &init, "register the allocator callbacks and device count");
	m.def("host_view", &host_view, "CPU tensor aliasing an npu tensor");
	m.def("fallback_ops", &fallback_ops, "ops that ran on the CPU so far");
	m.def("set_quiet", &set_quiet, "silence fallback warnings (thread)");
	m.def("current_device", &current_device);
	m.def("set_device", &set_device);
}
