// SPDX-License-Identifier: GPL-2.0
// The CPU fallback: an op with no npu kernel runs on CPU copies of its npu
// arguments and its results come back to the npu device, with a warning
// once per op. It follows ATen's own at::native::cpu_fallback with two
// differences that make it faithful:
//
// - Each npu storage the arguments use is copied to one CPU storage, and
//   every argument becomes a CPU tensor with its own sizes, strides and
//   offset into it, so arguments that alias on npu alias on the CPU (an
//   out= tensor overlapping an input fails the CPU's overlap check; an
//   in-place op on a view updates its base) and a returned view of an
//   argument comes back as a view of the npu storage.
// - Every storage the op changed is written back, whatever the schema's
//   alias annotations say: native_batch_norm updates running_mean and
//   running_var behind a schema that says it reads them. npu memory is
//   host addressable, so "changed" is a byte comparison of the CPU copy
//   with the npu memory it came from, which the op never touched.
//
// Ops whose generic kernels raise for any backend but CUDA's and CPU's
// (convolution_overrideable and its backward: at::convolution picks them for
// a PrivateUse1 tensor) have Python kernels (torch_npu/_cnn.py) that run
// at::convolution on the CPU for what the device does not take.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "npu.h"

namespace torch_npu {

namespace {

std::mutex g_warned_lock;
std::set<std::string> g_warned; // ops that warned, under g_warned_lock
thread_local bool t_quiet;

void warn_once(const std::string &op)
{
	if (t_quiet)
		return;
	{
		std::lock_guard<std::mutex> lock(g_warned_lock);
		if (!g_warned.insert(op).second)
			return;
	}
	TORCH_WARN("torch_npu: ", op, " has no davinci device kernel: it runs ",
		   "on the CPU (inputs copied out, results copied back); this ",
		   "warning is shown once per op");
}

std::string full_name(const c10::OperatorHandle &op)
{
	const auto &name = op.schema().operator_name();
	return name.overload_name.empty() ? name.name :
					    name.name + "." + name.overload_name;
}

bool is_npu(const at::Tensor &t)
{
	return t.defined() && t.device().type() == kNpu;
}

// One npu storage the arguments use and its CPU copy (bytes).
struct Mirror {
	c10::Storage npu;
	at::Tensor cpu; // uint8, the storage's bytes
};

class Mirrors {
public:
	// ``t`` as a CPU tensor over the CPU copy of its storage; the same
	// CPU tensor each time for one npu tensor (an in-place op's self and
	// out are one tensor, which the CPU's checks look for).
	at::Tensor to_cpu(const at::Tensor &t)
	{
		if (!is_npu(t))
			return t;
		for (const auto &[npu, cpu] : views_)
			if (npu.is_same(t))
				return cpu;
		const Mirror &m = mirror_of(t.storage());
		at::Tensor v = at::empty({0}, t.options().device(at::kCPU));
		v.set_(m.cpu.storage(), t.storage_offset(), t.sizes(),
		       t.strides());
		v._set_conj(t.is_conj());
		v._set_neg(t.is_neg());
		views_.emplace_back(t, v);
		return v;
	}

	// The copy a CPU tensor views, or null.
	const Mirror *viewed(const at::Tensor &cpu) const
	{
		if (!cpu.defined() || !cpu.has_storage())
			return nullptr;
		for (const Mirror &m : mirrors_)
			if (cpu.storage().is_alias_of(m.cpu.storage()))
				return &m;
		return nullptr;
	}

	// A CPU result that views one of the copies, as a view of the npu
	// storage; an undefined tensor when it views none.
	at::Tensor npu_view_of(const at::Tensor &cpu) const
	{
		const Mirror *m = viewed(cpu);
		if (!m)
			return {};
		at::Tensor v = at::empty({0},
					 cpu.options().device(m->npu.device()));
		v.set_(m->npu, cpu.storage_offset(), cpu.sizes(), cpu.strides());
		v._set_conj(cpu.is_conj());
		v._set_neg(cpu.is_neg());
		return v;
	}

	// Copy the bytes the op changed back to npu memory: the range from
	// the first to the last byte that differs, of each storage.
	void write_back() const
	{
		for (const Mirror &m : mirrors_) {
			size_t n = std::min<size_t>(m.npu.nbytes(),
						    m.cpu.numel());
			auto *dev = static_cast<unsigned char *>(
				m.npu.mutable_data());
			const auto *host = static_cast<const unsigned char *>(
				m.cpu.const_data_ptr());
			if (std::memcmp(dev, host, n) == 0)
				continue;
			size_t first = 0;
			while (first < n && dev[first] == host[first])
				first++;
			if (first == n)
				continue;
			size_t last = n; // dev[first] differs: the loop ends
			while (dev[last - 1] == host[last - 1])
				last--;
			std::memcpy(dev + first, host + first, last - first);
		}
	}

private:
	const Mirror &mirror_of(const c10::Storage &storage)
	{
		for (const Mirror &m : mirrors_)
			if (m.npu.is_alias_of(storage))
				return m;
		// every byte, through the npu copy kernel (which waits for the
		// device first)
		at::Tensor bytes = at::empty(
			{0}, at::TensorOptions().dtype(at::kByte)
				     .device(storage.device()));
		bytes.set_(storage, 0, {int64_t(storage.nbytes())}, {1});
		mirrors_.push_back({storage, bytes.cpu()});
		return mirrors_.back();
	}

	std::deque<Mirror> mirrors_; // push_back keeps references valid
	std::vector<std::pair<at::Tensor, at::Tensor>> views_; // npu, CPU
};

// An argument the op may have resized, restrided or marked conjugate (an
// out= tensor: linalg_lu_solve.out sets its conjugate bit): give the npu
// tensor the CPU tensor's metadata, and its bytes when the CPU op moved it
// to new memory.
void follow_metadata(const at::Tensor &cpu, const at::Tensor &npu,
		     const Mirrors &mirrors)
{
	if (!is_npu(npu))
		return;
	npu._set_conj(cpu.is_conj());
	npu._set_neg(cpu.is_neg());
	if (cpu.sizes() == npu.sizes() && cpu.strides() == npu.strides() &&
	    cpu.storage_offset() == npu.storage_offset() &&
	    mirrors.viewed(cpu))
		return;
	at::_copy_from_and_resize(cpu, npu);
}

std::optional<c10::Device> first_npu_device(const std::vector<at::Tensor> &ts)
{
	for (const auto &t : ts)
		if (is_npu(t))
			return t.device();
	return std::nullopt;
}

at::Tensor to_device(const at::Tensor &t, std::optional<c10::Device> device,
		     const Mirrors &mirrors)
{
	at::Tensor view = mirrors.npu_view_of(t);
	if (view.defined())
		return view;
	return t.defined() && device ? t.to(*device) : t;
}

} // namespace

void set_quiet(bool quiet)
{
	t_quiet = quiet;
}

std::vector<std::string> fallback_ops()
{
	std::lock_guard<std::mutex> lock(g_warned_lock);
	return {g_warned.begin(), g_warned.end()};
}

void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	warn_once(full_name(op));
	const auto &args = op.schema().arguments();
	const size_t nargs = args.size();
	const size_t begin = stack->size() - nargs;

	// every npu tensor argument (alone or in a list) with its CPU copy
	struct Arg {
		size_t at; // argument position
		at::Tensor npu, cpu;
	};
	std::vector<Arg> moved;
	std::vector<at::Tensor> npu_tensors;
	Mirrors mirrors;
	std::optional<c10::Device> device;
	auto take = [&](size_t i, const at::Tensor &t) {
		at::Tensor cpu = mirrors.to_cpu(t);
		if (is_npu(t)) {
			moved.push_back({i, t, cpu});
			npu_tensors.push_back(t);
		}
		return cpu;
	};
	for (size_t i = 0; i < nargs; i++) {
		c10::IValue &v = (*stack)[begin + i];
		if (v.isTensor()) {
			v = c10::IValue(take(i, v.toTensor()));
		} else if (v.isTensorList()) {
			c10::List<at::Tensor> cpu;
			for (const at::Tensor &t : v.toTensorVector())
				cpu.push_back(take(i, t));
			v = c10::IValue(cpu);
		} else if (v.isOptionalTensorList()) {
			c10::List<std::optional<at::Tensor>> cpu;
			for (std::optional<at::Tensor> t :
			     v.toOptionalTensorList())
				cpu.push_back(t ? std::optional<at::Tensor>(
							  take(i, *t)) :
						  t);
			v = c10::IValue(cpu);
		} else if (v.isDevice()) {
			device = v.toDevice();
			v = c10::IValue(c10::Device(c10::kCPU));
		}
	}

	op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

	mirrors.write_back();
	for (const Arg &a : moved)
		follow_metadata(a.cpu, a.npu, mirrors);

	if (!device)
		device = first_npu_device(npu_tensors);
	const auto &rets = op.schema().returns();
	const size_t rbegin = stack->size() - rets.size();
	for (size_t r = 0; r < rets.size(); r++) {
		c10::IValue &v = (*stack)[rbegin + r];
		const auto *alias = rets[r].alias_info();
		if (alias && alias->isWrite() && v.isTensor()) {
			// an in-place or out= op returns its npu argument
			for (const Arg &a : moved) {
				const auto *in = args[a.at].alias_info();
				if (in && *in == *alias) {
					v = c10::IValue(a.npu);
					break;
				}
			}
		}
		if (v.isTensor() && !is_npu(v.toTensor())) {
			v = c10::IValue(to_device(v.toTensor(), device,
						  mirrors));
		} else if (v.isTensorList()) {
			c10::List<at::Tensor> out;
			for (const auto &t : v.toTensorVector())
				out.push_back(to_device(t, device, mirrors));
			v = c10::IValue(out);
		}
	}
}

} // namespace torch_npu

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	// the CPU's own kernel, for the CPU's errors (its composite kernel
	// raises IndexError where the CPU raises RuntimeError)
	m.impl("narrow_copy", torch::CppFunction::makeFromBoxedFunction<
				      &torch_npu::cpu_fallback>());
	// composite kernels that call a CPU/CUDA DispatchStub directly
	m.impl("conj_physical_", torch::CppFunction::makeFromBoxedFunction<
					 &torch_npu::cpu_fallback>());
	// addr's composite kernel resizes an in-place self the CPU refuses
	for (const char *name : {"addr", "addr_", "addr.out"})
		m.impl(name, torch::CppFunction::makeFromBoxedFunction<
				     &torch_npu::cpu_fallback>());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<
		   &torch_npu::cpu_fallback>());
}
