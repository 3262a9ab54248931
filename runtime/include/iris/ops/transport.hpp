// Remote accesses: what a `multinode` kernel does with a rank that may be on
// another node. Near ranks, those of my node team (DeviceContext::node_first,
// node_size), share memory with me: a remote access to them is the plain access
// of ops/memory.hpp, ops/atomic.hpp and ops/sync.hpp. Every other rank is far,
// reached through the world's transport.
//
// irisc's transport route calls these with the program instance first and then
// exactly the arguments of the plain operation of the same name (remote_store ~
// store, remote_load ~ load, ...), for every pointer whose rank the checker
// cannot prove near. The pointer is translated as usual (`p @ r`).
//
//   remote_store       put: a store to any rank; on a far rank complete at the
//                      latest at quiet(), a release, a put_signal or a barrier
//   remote_load        get: a load from any rank (returns the data)
//   remote_put_signal  put, then raise a flag of the same rank (release, sys)
//                      once the data is visible there
//   remote_atomic_*, remote_raise_signal  the atomics and signals of any rank
//   quiet              every put of this rank is complete at its target
//   near, node_rank, node_size, node_peer  my node team
//
// In a world of one node (run_threads, the GPU's IPC worlds) every rank is near
// and each remote access is the plain one; the far path, for worlds of several
// nodes, is in ops/transport_far.hpp: the CPU's run_mpi, and on the GPU kernels
// built for NVSHMEM (IRIS_NVSHMEM, device_nvshmem.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "iris/device.hpp"
#include "iris/ops/atomic.hpp"
#include "iris/ops/memory.hpp"
#include "iris/ops/sync.hpp"
#include "iris/types/program.hpp"
#if IRIS_FAR_PATH
#include "iris/ops/transport_far.hpp"  // the far path: worlds of several nodes
#endif

namespace iris {

// ------------------------------------------------------------------ node team

// Whether rank r is in my node team (its memory takes loads and stores).
IRIS_HD inline bool near(const Program& p, int r) {
  return r >= p.ctx.node_first && r - p.ctx.node_first < p.ctx.node_size;
}
// My index in my node team, and its size.
IRIS_HD inline int32_t node_rank(const Program& p) { return p.ctx.rank - p.ctx.node_first; }
IRIS_HD inline int32_t node_size(const Program& p) { return p.ctx.node_size; }
// The rank of member k of my node team, k taken modulo the team's size (a
// negative k counts from the end: -1 is the last member). Always near.
IRIS_HD inline int32_t node_peer(const Program& p, int k) {
  const int n = p.ctx.node_size;
  return p.ctx.node_first + (k % n + n) % n;
}

// ------------------------------------------------------------------ remote accesses

template <class P, class X, class M = NoMask, class C = Unchecked, class Known = AnyPointers,
          class KnownMask = AnyMask>
IRIS_HD void remote_store([[maybe_unused]] const Program& prog, const P& ptr, const X& value, const M& mask = {},
                          const C& check = {}, Known known = {}, KnownMask known_mask = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) return detail::far_store(prog.ctx, ptr, value, mask, check);
#endif
  store(ptr, value, mask, check, known, known_mask);
}

template <class P, class M = NoMask, class O = NoOther, class C = Unchecked, class Known = AnyPointers>
IRIS_HD auto remote_load([[maybe_unused]] const Program& prog, const P& ptr, const M& mask = {}, const O& other = {},
                         const C& check = {}, Known known = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) return detail::far_load(prog.ctx, ptr, mask, other, check);
#endif
  return load(ptr, mask, other, check, known);
}

// The flag is raised (set to, or increased by, signal_value) with release
// semantics at system scope after the data of the put is visible on its rank.
template <bool Add, class P, class X, class M, class F, class S, class C = Unchecked>
IRIS_HD void remote_put_signal([[maybe_unused]] const Program& prog, const P& ptr, const X& value, const M& mask,
                               F* flag, const S& signal_value, const C& check = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) {
    detail::far_store(prog.ctx, ptr, value, mask, check);
    return detail::far_raise_signal<Add, Sem::release, Scope::sys>(prog.ctx, flag, signal_value, check);
  }
#endif
  store(ptr, value, mask, check);
  raise_signal<Add, Sem::release, Scope::sys>(flag, signal_value, check);
}

template <AtomicOp Op, Sem S, Scope Sc, class P, class X, class M = NoMask, class C = Unchecked>
IRIS_HD auto remote_atomic_rmw([[maybe_unused]] const Program& prog, const P& ptr, const X& value,
                               const M& mask = {}, const C& check = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) return detail::far_atomic_rmw<Op, S, Sc>(prog.ctx, ptr, value, mask, check);
#endif
  return atomic_rmw<Op, S, Sc>(ptr, value, mask, check);
}

template <Sem S, Scope Sc, class P, class E, class X, class C = Unchecked>
IRIS_HD auto remote_atomic_compare_exchange([[maybe_unused]] const Program& prog, const P& ptr, const E& compare,
                                            const X& value, const C& check = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx))
    return detail::far_atomic_compare_exchange<S, Sc>(prog.ctx, ptr, compare, value, check);
#endif
  return atomic_compare_exchange<S, Sc>(ptr, compare, value, check);
}

template <Sem S, Scope Sc, class P, class C = Unchecked>
IRIS_HD auto remote_atomic_read([[maybe_unused]] const Program& prog, const P& ptr, const C& check = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) return detail::far_atomic_read<S, Sc>(prog.ctx, ptr, check);
#endif
  return atomic_read<S, Sc>(ptr, check);
}

template <Sem S, Scope Sc, class P, class X, class C = Unchecked>
IRIS_HD void remote_atomic_write([[maybe_unused]] const Program& prog, const P& ptr, const X& value,
                                 const C& check = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) return detail::far_atomic_write<S, Sc>(prog.ctx, ptr, value, check);
#endif
  atomic_write<S, Sc>(ptr, value, check);
}

template <bool Add, Sem S, Scope Sc, class T, class X, class C = Unchecked>
IRIS_HD void remote_raise_signal([[maybe_unused]] const Program& prog, T* ptr, const X& value, const C& check = {}) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) return detail::far_raise_signal<Add, S, Sc>(prog.ctx, ptr, value, check);
#endif
  raise_signal<Add, S, Sc>(ptr, value, check);
}

// Every put of this rank is complete at its target; a fence at system scope.
// Each thread completes its own puts to far ranks first (a network's queues may
// be a thread's or a warp's: NVSHMEM's quiet completes the caller's).
IRIS_HD inline void quiet([[maybe_unused]] const Program& prog) {
#if IRIS_FAR_PATH
  if (!detail::one_node(prog.ctx)) detail::far_complete_puts();
#endif
  single([&] { fence<Sem::acq_rel, Scope::sys>(); });
}

// ------------------------------------------------------------------ launch

namespace detail {

// launch_kernel's check that a kernel may run in the world of `ctx`. irisc gives
// every kernel struct iris_node_local (false for a `multinode kernel`) and
// iris_kernel_name; a node-local kernel reaches every rank it names with loads
// and stores, which a far rank's memory does not take, and a multinode kernel
// needs the far path, which a GPU kernel has only when built for NVSHMEM.
// Kernels written by hand, without the members, are not checked.
template <class Kernel>
void check_node_local(const DeviceContext& ctx) {
  if constexpr (requires { Kernel::iris_node_local; Kernel::iris_kernel_name; }) {
    if (ctx.node_size == ctx.world_size) return;
    if (!Kernel::iris_node_local && !IRIS_FAR_PATH) {
      throw Error(std::string("iris: kernel ") + Kernel::iris_kernel_name + " has no far path: it was compiled "
                  "without NVSHMEM (IRIS_NVSHMEM), and rank " + std::to_string(ctx.rank) + " runs in a world of "
                  "several nodes; build it with iris_add_kernels(... NVSHMEM) and link Iris::runtime_gpu_nvshmem");
    }
    if (!Kernel::iris_node_local) return;
    throw Error(std::string("iris: kernel ") + Kernel::iris_kernel_name + " is node-local, but rank " +
                std::to_string(ctx.rank) + " runs in a world of several nodes (its node team is ranks " +
                std::to_string(ctx.node_first) + " .. " + std::to_string(ctx.node_first + ctx.node_size - 1) +
                " of " + std::to_string(ctx.world_size) + "): declare it `multinode kernel` and reach far ranks "
                "with put and get, or run it on one node");
  }
}

}  // namespace detail
}  // namespace iris
