// iris_torch._C: the collectives (iris::ccl) and the fused operations
// (iris::ops) as torch operators, torch.ops.iris.*, on tensors whose storage
// is in the symmetric heap; and the world they run in, which init() joins and
// finalize() leaves (docs/python.md).
//
// The world is a world of processes held open between calls (iris::WorldHandle), joined
// through MPI or torch.distributed (PythonBootstrap): every
// operator runs on the rank's thread (iris_torch::run). Every
// operator is collective, as the calls it makes are: every rank calls the same
// operators in the same order with tensors of the same shapes.
//
// Heap tensors (iris.empty, and every operator's output) and the world are
// iris_torch/world.hpp's (libiris_torch.so).
//
// Every operator first meets the other ranks in stream order (a device barrier,
// iris::ccl::barrier) once its outputs are allocated: the kernels it launches
// read other ranks' inputs and write into their outputs, which torch kernels
// queued before the call (on the GPU, still running) may write or read.
//
// Every tensor an operator takes must be on the heap, whatever the algorithm
// then needs, so that a program's correctness does not depend on which
// algorithm a size picks. Arguments are checked before anything is collective;
// an argument that is wrong on one rank only is an error of that rank alone,
// and the others wait for it in their next collective call.
//
// Each operator also has a Meta kernel, which gives the output's shape and
// dtype without running anything (torch's meta tensors, for tracing): from
// the same functions of the shapes.
//
// The operators whose output's shape depends on the world size take it as an
// argument, world_size, as torch's functional collectives take group_size:
// optional when they run, required when they are traced. A traced graph then
// holds it, and torch.compile's caches, which know a graph by its operators
// and inputs alone (and are shared by every run of a user), never hand a
// program compiled for one number of ranks to a run with another.
#include <torch/extension.h>
#include <torch/library.h>
#include <torch/version.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "iris/ccl.hpp"
#include "iris/fused.hpp"
#include "iris/host.hpp"
#include "iris_torch/world.hpp"

namespace {

using iris_torch::current_stream;
using iris_torch::heap_tensor;
using iris_torch::on_rank;
using iris_torch::require_on_heap;

at::Tensor empty(at::IntArrayRef sizes, at::ScalarType dtype) {
  for (const std::int64_t size : sizes) TORCH_CHECK(size >= 0, "iris.empty: negative size in ", sizes);
  return on_rank("iris.empty", [&](iris::Rank& rank, iris::Workspace&) { return heap_tensor(rank, sizes, dtype); });
}

// ---------------------------------------------------------------- arguments

// A dense tensor on the heap's device (or meta); the heap is checked on the rank's thread (require_on_heap).
void check_dense(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == iris_torch::heap_device_type || t.is_meta(), op, ": ", name, " is on ", t.device(),
              "; this build's heap is on ", c10::DeviceTypeName(iris_torch::heap_device_type, true));
  TORCH_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous");
}

iris::ccl::Op reduction(const char* op, const std::string& name) {
  for (const iris::ccl::Op o : {iris::ccl::Op::sum, iris::ccl::Op::max, iris::ccl::Op::min}) {
    if (name == iris::ccl::name_of(o)) return o;
  }
  TORCH_CHECK(false, op, ": unknown reduction '", name, "' (sum, max or min)");
}

// Calls f(T{}) with the C++ element type of `dtype`, one the collectives take.
template <class F>
void with_ccl_element(const char* op, at::ScalarType dtype, F&& f) {
  switch (dtype) {
    case at::kFloat: return f(float{});
    case at::kBFloat16: return f(iris::bfloat16{});
    case at::kHalf: return f(iris::half{});
    case at::kInt: return f(std::int32_t{});
    case at::kLong: return f(std::int64_t{});
    default:
      TORCH_CHECK(false, op, ": input has dtype ", dtype,
                  "; the collectives take float32, bfloat16, float16, int32 or int64");
  }
}

// A collective's input: dense, of an element type the collectives take.
void check_collective_input(const char* op, const at::Tensor& input) {
  check_dense(op, "input", input);
  with_ccl_element(op, input.scalar_type(), [](auto) {});
}

// The C++ type of an `int?` argument: c10's own optional before torch 2.4,
// std::optional from then on.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
using OptionalInt = std::optional<std::int64_t>;
#else
using OptionalInt = c10::optional<std::int64_t>;
#endif

// The world size of a call that runs: the joined world's, which `given` (the
// caller's world_size argument, if any) must match.
int running_world_size(const char* op, const OptionalInt& given) {
  const int world = iris_torch::world_size(op);
  TORCH_CHECK(!given.has_value() || *given == world, op, ": world_size is ", given.value_or(0), ", but the world has ",
              world, " ranks");
  return world;
}

// The world size of a traced call (a Meta kernel): the caller's, which it must give.
int traced_world_size(const char* op, const OptionalInt& given) {
  TORCH_CHECK(given.has_value(), op,
              ": traced without world_size; its output's shape depends on the world size, which the traced graph must "
              "hold: pass world_size=iris_torch.world_size()");
  TORCH_CHECK(*given >= 1, op, ": world_size must be positive, not ", *given);
  return static_cast<int>(*given);
}

template <class T>
T* data(const at::Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// all_gather's output: the first dimension of `input` times the world size.
std::vector<std::int64_t> gathered_sizes(const char* op, const at::Tensor& input, int world) {
  TORCH_CHECK(input.dim() >= 1, op, ": input must have a dimension to gather along");
  std::vector<std::int64_t> sizes = input.sizes().vec();
  sizes[0] *= world;
  return sizes;
}

// The first dimension of `input` split among the ranks: the shape of a block.
std::vector<std::int64_t> block_sizes(const char* op, const at::Tensor& input, int world) {
  TORCH_CHECK(input.dim() >= 1 && input.size(0) % world == 0, op, ": input's first dimension (", input.sizes(),
              ") must be a multiple of the world size ", world);
  std::vector<std::int64_t> sizes = input.sizes().vec();
  sizes[0] /= world;
  return sizes;
}

// ---------------------------------------------------------------- collectives

// What every collective does on the rank's thread: `input` checked to be on
// the heap, the output (of `sizes` and input's dtype) made on the heap, and
// call(workspace, input's data, output's data) run with their element type.
template <class Call>
at::Tensor collective(const char* op, const at::Tensor& input, at::IntArrayRef sizes, Call&& call) {
  return on_rank(op, [&](iris::Rank& rank, iris::Workspace& ws) {
    require_on_heap(rank, op, "input", input);
    at::Tensor output = heap_tensor(rank, sizes, input.scalar_type());
    iris::ccl::barrier(ws, current_stream());
    with_ccl_element(op, input.scalar_type(), [&](auto element) {
      using T = decltype(element);
      call(ws, data<T>(input), data<T>(output));
    });
    return output;
  });
}

// output = input reduced over the ranks.
at::Tensor all_reduce(const at::Tensor& input, const std::string& op_name) {
  constexpr const char* op = "iris.all_reduce";
  check_collective_input(op, input);
  const iris::ccl::Op reduce = reduction(op, op_name);
  const auto count = static_cast<std::size_t>(input.numel());
  return collective(op, input, input.sizes(), [&](iris::Workspace& ws, const auto* in, auto* out) {
    iris::ccl::all_reduce(ws, in, out, count, reduce, current_stream());
  });
}

// output = the ranks' inputs, one after the other along the first dimension.
at::Tensor all_gather(const at::Tensor& input, OptionalInt world_size) {
  constexpr const char* op = "iris.all_gather";
  check_collective_input(op, input);
  const std::vector<std::int64_t> sizes = gathered_sizes(op, input, running_world_size(op, world_size));
  const auto count = static_cast<std::size_t>(c10::multiply_integers(sizes));  // the output's, as ccl counts
  return collective(op, input, sizes, [&](iris::Workspace& ws, const auto* in, auto* out) {
    iris::ccl::all_gather(ws, in, out, count, current_stream());
  });
}

// Rank r's output = block r (of the first dimension) of the ranks' inputs, reduced.
at::Tensor reduce_scatter(const at::Tensor& input, const std::string& op_name, OptionalInt world_size) {
  constexpr const char* op = "iris.reduce_scatter";
  check_collective_input(op, input);
  const iris::ccl::Op reduce = reduction(op, op_name);
  const std::vector<std::int64_t> sizes = block_sizes(op, input, running_world_size(op, world_size));
  const auto count = static_cast<std::size_t>(input.numel());
  return collective(op, input, sizes, [&](iris::Workspace& ws, const auto* in, auto* out) {
    iris::ccl::reduce_scatter(ws, in, out, count, reduce, current_stream());
  });
}

// Block q (of the first dimension) of this rank's input lands in block r of rank q's output.
at::Tensor all_to_all(const at::Tensor& input) {
  constexpr const char* op = "iris.all_to_all";
  check_collective_input(op, input);
  block_sizes(op, input, iris_torch::world_size(op));  // the check that the blocks split evenly
  const auto count = static_cast<std::size_t>(input.numel());
  return collective(op, input, input.sizes(), [&](iris::Workspace& ws, const auto* in, auto* out) {
    iris::ccl::all_to_all(ws, in, out, count, current_stream());
  });
}

// Every rank's output = root's input.
at::Tensor broadcast(const at::Tensor& input, std::int64_t root) {
  constexpr const char* op = "iris.broadcast";
  check_collective_input(op, input);
  const auto count = static_cast<std::size_t>(input.numel());
  return collective(op, input, input.sizes(), [&](iris::Workspace& ws, const auto* in, auto* out) {
    // iris::ccl::broadcast works in place: root's output holds what it sends
    iris_torch::copy_on_stream(out, in, count * sizeof *in);
    iris::ccl::broadcast(ws, out, count, static_cast<int>(root), current_stream());
  });
}

// ---------------------------------------------------------------- fused operations

// a (rows × cols) and b, bf16 matrices.
void check_matrices(const char* op, const at::Tensor& a, const at::Tensor& b) {
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor&>{"a", a}, {"b", b}}) {
    check_dense(op, name, t);
    TORCH_CHECK(t.scalar_type() == at::kBFloat16, op, ": ", name, " has dtype ", t.scalar_type(),
                "; the fused operations take bfloat16 matrices");
    TORCH_CHECK(t.dim() == 2, op, ": ", name, " must be a matrix, not of shape ", t.sizes());
  }
  TORCH_CHECK(a.size(1) == b.size(0), op, ": a (", a.sizes(), ") and b (", b.sizes(),
              ") cannot be multiplied");
}

struct FusedSizes {
  std::int64_t m, n, k, c_rows, c_cols;
};

using Fused = void (*)(iris::Workspace&, const iris::bfloat16*, const iris::bfloat16*, iris::bfloat16*, int, int, int,
                       iris::Stream, const iris::ops::FusedConfig&);

// c (c_rows × c_cols) = the operation `fused` of a and b, of the global sizes m, n, k
// (what `sizes` makes of a, b and the world size).
at::Tensor fused(const char* op, Fused operation, const at::Tensor& a, const at::Tensor& b, OptionalInt world_size,
                 FusedSizes (*sizes)(const at::Tensor&, const at::Tensor&, std::int64_t)) {
  check_matrices(op, a, b);
  const int world = running_world_size(op, world_size);
  return on_rank(op, [&](iris::Rank& rank, iris::Workspace& ws) {
    require_on_heap(rank, op, "a", a);
    require_on_heap(rank, op, "b", b);
    const auto [m, n, k, c_rows, c_cols] = sizes(a, b, world);
    at::Tensor c = heap_tensor(rank, {c_rows, c_cols}, at::kBFloat16);
    iris::ccl::barrier(ws, current_stream());
    operation(ws, data<iris::bfloat16>(a), data<iris::bfloat16>(b), data<iris::bfloat16>(c), static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), current_stream(), iris::ops::FusedConfig{});
    return c;
  });
}

// The global sizes of each operation from its a, b and the world size.
// c = a × B, B split by columns (b: this rank's k × n/W); every rank gets all of c (m × n).
FusedSizes all_scatter_sizes(const at::Tensor& a, const at::Tensor& b, std::int64_t world) {
  return {a.size(0), b.size(1) * world, a.size(1), a.size(0), b.size(1) * world};
}
// c = A × B, K split (a: m × k/W, b: k/W × n); every rank gets the sum (m × n).
FusedSizes all_reduce_sizes(const at::Tensor& a, const at::Tensor& b, std::int64_t world) {
  return {a.size(0), b.size(1), a.size(1) * world, a.size(0), b.size(1)};
}
// c = A × B, K split (a: m × k/W, b: k/W × n); rank r gets its rows r·m/W .. of the sum.
FusedSizes reduce_scatter_sizes(const at::Tensor& a, const at::Tensor& b, std::int64_t world) {
  TORCH_CHECK(a.size(0) % world == 0, "iris.matmul_reduce_scatter: a's rows (", a.size(0),
              ") must be a multiple of the world size ", world, ": every rank gets rows / ", world, " of c");
  return {a.size(0), b.size(1), a.size(1) * world, a.size(0) / world, b.size(1)};
}
// c = all_gather(A) × b (a: this rank's m/W × k rows, b: k × n); every rank gets all of c (m × n).
FusedSizes gather_sizes(const at::Tensor& a, const at::Tensor& b, std::int64_t world) {
  return {a.size(0) * world, b.size(1), a.size(1), a.size(0) * world, b.size(1)};
}

at::Tensor matmul_all_scatter(const at::Tensor& a, const at::Tensor& b, OptionalInt world_size) {
  return fused("iris.matmul_all_scatter", &iris::ops::matmul_all_scatter<iris::bfloat16>, a, b, world_size,
               &all_scatter_sizes);
}
at::Tensor matmul_all_reduce(const at::Tensor& a, const at::Tensor& b) {
  return fused("iris.matmul_all_reduce", &iris::ops::matmul_all_reduce<iris::bfloat16>, a, b, OptionalInt{},
               &all_reduce_sizes);
}
at::Tensor matmul_reduce_scatter(const at::Tensor& a, const at::Tensor& b, OptionalInt world_size) {
  return fused("iris.matmul_reduce_scatter", &iris::ops::matmul_reduce_scatter<iris::bfloat16>, a, b, world_size,
               &reduce_scatter_sizes);
}
at::Tensor all_gather_matmul(const at::Tensor& a, const at::Tensor& b, OptionalInt world_size) {
  return fused("iris.all_gather_matmul", &iris::ops::all_gather_matmul<iris::bfloat16>, a, b, world_size,
               &gather_sizes);
}

// ---------------------------------------------------------------- Meta kernels

at::Tensor meta_like(const at::Tensor& input, at::IntArrayRef sizes) { return at::empty(sizes, input.options()); }

at::Tensor all_reduce_meta(const at::Tensor& input, const std::string& op_name) {
  check_collective_input("iris.all_reduce", input);
  reduction("iris.all_reduce", op_name);
  return meta_like(input, input.sizes());
}
at::Tensor all_gather_meta(const at::Tensor& input, OptionalInt world_size) {
  constexpr const char* op = "iris.all_gather";
  check_collective_input(op, input);
  return meta_like(input, gathered_sizes(op, input, traced_world_size(op, world_size)));
}
at::Tensor reduce_scatter_meta(const at::Tensor& input, const std::string& op_name, OptionalInt world_size) {
  constexpr const char* op = "iris.reduce_scatter";
  check_collective_input(op, input);
  reduction(op, op_name);
  return meta_like(input, block_sizes(op, input, traced_world_size(op, world_size)));
}
// (all_to_all's output has its input's shape: the split into blocks is checked when it runs)
at::Tensor all_to_all_meta(const at::Tensor& input) {
  check_collective_input("iris.all_to_all", input);
  return meta_like(input, input.sizes());
}
at::Tensor broadcast_meta(const at::Tensor& input, std::int64_t) {
  check_collective_input("iris.broadcast", input);
  return meta_like(input, input.sizes());
}

at::Tensor fused_meta(const char* op, const at::Tensor& a, const at::Tensor& b, OptionalInt world_size,
                      FusedSizes (*sizes)(const at::Tensor&, const at::Tensor&, std::int64_t)) {
  check_matrices(op, a, b);
  const FusedSizes s = sizes(a, b, traced_world_size(op, world_size));
  return meta_like(a, {s.c_rows, s.c_cols});
}

}  // namespace

TORCH_LIBRARY(iris, m) {
  m.def("empty(int[] size, ScalarType dtype) -> Tensor", &empty);
  m.def("all_reduce(Tensor input, str op='sum') -> Tensor");
  m.def("all_gather(Tensor input, int? world_size=None) -> Tensor");
  m.def("reduce_scatter(Tensor input, str op='sum', int? world_size=None) -> Tensor");
  m.def("all_to_all(Tensor input) -> Tensor");
  m.def("broadcast(Tensor input, int root) -> Tensor");
  m.def("matmul_all_scatter(Tensor a, Tensor b, int? world_size=None) -> Tensor");
  m.def("matmul_all_reduce(Tensor a, Tensor b) -> Tensor");
  m.def("matmul_reduce_scatter(Tensor a, Tensor b, int? world_size=None) -> Tensor");
  m.def("all_gather_matmul(Tensor a, Tensor b, int? world_size=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(iris, IRIS_TORCH_HEAP_KEY, m) {
  m.impl("all_reduce", &all_reduce);
  m.impl("all_gather", &all_gather);
  m.impl("reduce_scatter", &reduce_scatter);
  m.impl("all_to_all", &all_to_all);
  m.impl("broadcast", &broadcast);
  m.impl("matmul_all_scatter", &matmul_all_scatter);
  m.impl("matmul_all_reduce", &matmul_all_reduce);
  m.impl("matmul_reduce_scatter", &matmul_reduce_scatter);
  m.impl("all_gather_matmul", &all_gather_matmul);
}

TORCH_LIBRARY_IMPL(iris, Meta, m) {
  m.impl("all_reduce", &all_reduce_meta);
  m.impl("all_gather", &all_gather_meta);
  m.impl("reduce_scatter", &reduce_scatter_meta);
  m.impl("all_to_all", &all_to_all_meta);
  m.impl("broadcast", &broadcast_meta);
  m.impl("matmul_all_scatter", [](const at::Tensor& a, const at::Tensor& b, OptionalInt world_size) {
    return fused_meta("iris.matmul_all_scatter", a, b, world_size, &all_scatter_sizes);
  });
  // (its output's shape does not depend on the world size: any will do)
  m.impl("matmul_all_reduce", [](const at::Tensor& a, const at::Tensor& b) {
    return fused_meta("iris.matmul_all_reduce", a, b, OptionalInt{1}, &all_reduce_sizes);
  });
  m.impl("matmul_reduce_scatter", [](const at::Tensor& a, const at::Tensor& b, OptionalInt world_size) {
    return fused_meta("iris.matmul_reduce_scatter", a, b, world_size, &reduce_scatter_sizes);
  });
  m.impl("all_gather_matmul", [](const at::Tensor& a, const at::Tensor& b, OptionalInt world_size) {
    return fused_meta("iris.all_gather_matmul", a, b, world_size, &gather_sizes);
  });
}

// torch 1.13 sends meta tensors through AutogradMeta first, where it has no
// fallthrough of its own for operators without a gradient, as these are.
TORCH_LIBRARY_IMPL(iris, AutogradMeta, m) {
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "matmul_all_scatter",
                         "matmul_all_reduce", "matmul_reduce_scatter", "all_gather_matmul"}) {
    m.impl(op, torch::CppFunction::makeFallthrough());
  }
}

namespace {

// The world's Bootstrap over torch.distributed: its allgather is a Python
// function of iris_torch (__init__.py: bytes in, every rank's bytes out, over a
// gloo group), called with the GIL held, from the rank's thread.
class PythonBootstrap final : public iris::Bootstrap {
 public:
  PythonBootstrap(int rank, int size, pybind11::function allgather)
      : rank_(rank), size_(size), allgather_(std::move(allgather)) {}
  ~PythonBootstrap() override {
    const pybind11::gil_scoped_acquire gil;
    allgather_ = pybind11::function();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    const pybind11::gil_scoped_acquire gil;
    std::string gathered;
    try {
      gathered = allgather_(pybind11::bytes(static_cast<const char*>(mine), bytes)).cast<std::string>();
    } catch (const pybind11::error_already_set& e) {
      throw iris::Error(std::string("iris_torch: meeting the other ranks through torch.distributed failed: ") +
                        e.what());
    }
    if (gathered.size() != bytes * static_cast<std::size_t>(size_)) {  // an iris::Error, as the runtime's own
      throw iris::Error("iris_torch: torch.distributed's allgather returned " + std::to_string(gathered.size()) +
                        " bytes for " + std::to_string(size_) + " ranks of " + std::to_string(bytes));
    }
    std::memcpy(all, gathered.data(), gathered.size());
  }

 private:
  int rank_, size_;
  pybind11::function allgather_;
};

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "Iris: collectives and fused GEMMs over a symmetric heap, as torch.ops.iris.*";
  m.def(
      "init", [](std::size_t heap_bytes) { iris_torch::init(heap_bytes, nullptr); }, pybind11::arg("heap_bytes"));
  m.def(
      "init_through",
      [](std::size_t heap_bytes, int rank, int size, pybind11::function allgather) {
        TORCH_CHECK(0 <= rank && rank < size, "iris_torch.init: rank ", rank, " of a world of ", size);
        iris_torch::init(heap_bytes, std::make_unique<PythonBootstrap>(rank, size, std::move(allgather)));
      },
      pybind11::arg("heap_bytes"), pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("allgather"));
  m.def("finalize", &iris_torch::finalize);
  m.def("rank", [] { return iris_torch::rank("iris_torch.rank"); });
  m.def("world_size", [] { return iris_torch::world_size("iris_torch.world_size"); });
  m.def("device", [] {
    return on_rank("iris_torch.device", [](iris::Rank&, iris::Workspace&) { return iris_torch::heap_device().str(); });
  });
}
