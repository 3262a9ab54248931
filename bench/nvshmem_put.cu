// NVSHMEM's put between two GPUs, the peer of bench/p2p_bench.cpp's one_way
// rows (issue 7). Not part of the CMake build: the build machine has no NVSHMEM.
// scripts/multi-gpu.sh compiles it on the GPU machine against the NVSHMEM that
// the machine's PyTorch carries (headers and libraries of the nvidia-nvshmem
// wheel) and starts it as two processes, PE 0 on GPU 0 and PE 1 on GPU 1, that
// meet through NVSHMEM's unique-id bootstrap: PE 0 writes the id to a file, PE 1
// reads it.
//
// PE 0 puts S bytes of its src into PE 1's dst:
//   nvshmem_put_host   nvshmemx_putmem_on_stream (host API, ordered on a stream)
//   nvshmem_put_block  a kernel whose blocks each put a 64 KiB chunk with
//                      nvshmemx_putmem_block (device API; built with
//                      -DNVSHMEM_DEVICE_PUT, which needs NVSHMEM's device library)
// Timing and checking as p2p_bench: the median of 5 timings of back-to-back puts
// (GPU events on PE 0's stream, a quiet before the end event) after warm-up;
// PE 0 checks PE 1's dst through nvshmem_ptr. Prints rows in p2p_bench's format.
// Usage: nvshmem_put PE ID_FILE MAX_BYTES
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "nvshmem_put: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

float value_of(int rank, std::size_t i) { return static_cast<float>(rank * 1000 + i % 977) + 0.5f; }

// PE 0 writes the unique id (to a temporary name, then renamed: PE 1 never
// reads half a file); PE 1 waits for it.
void share_id(int pe, const std::string& path, nvshmemx_uniqueid_t* id) {
  if (pe == 0) {
    nvshmemx_get_uniqueid(id);
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(id), sizeof *id);
    std::rename(tmp.c_str(), path.c_str());
    return;
  }
  for (int i = 0; i < 6000; ++i) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(reinterpret_cast<char*>(id), sizeof *id)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "nvshmem_put: no unique id in %s after 60 s\n", path.c_str());
  std::exit(1);
}

#ifdef NVSHMEM_DEVICE_PUT
constexpr std::size_t kChunk = 64 * 1024;
__global__ void put_blocks(char* dst, const char* src, std::size_t bytes, int peer) {
  const std::size_t at = static_cast<std::size_t>(blockIdx.x) * kChunk;
  nvshmemx_putmem_block(dst + at, src + at, bytes - at < kChunk ? bytes - at : kChunk, peer);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: nvshmem_put PE ID_FILE MAX_BYTES\n");
    return 2;
  }
  const int pe = std::atoi(argv[1]);
  const std::size_t max_bytes = std::strtoull(argv[3], nullptr, 10);
  check(cudaSetDevice(pe), "cudaSetDevice");
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  share_id(pe, argv[2], &id);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  nvshmemx_set_attr_uniqueid_args(pe, 2, &id, &attr);
  if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) {
    std::fprintf(stderr, "nvshmem_put: nvshmemx_init_attr failed\n");
    return 1;
  }
  auto* src = static_cast<float*>(nvshmem_malloc(max_bytes));
  auto* dst = static_cast<float*>(nvshmem_malloc(max_bytes));
  if (!src || !dst) {
    std::fprintf(stderr, "nvshmem_put: nvshmem_malloc failed (NVSHMEM_SYMMETRIC_SIZE)\n");
    return 1;
  }
  {
    std::vector<float> host(max_bytes / sizeof(float));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = value_of(pe, i);
    check(cudaMemcpy(src, host.data(), max_bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  bool all_ok = true;

  auto measure = [&](const char* who, std::size_t bytes, auto put) {
    const int iters = bytes >= (std::size_t{64} << 20) ? 5 : bytes >= (std::size_t{1} << 20) ? 20 : 50;
    check(cudaMemset(dst, 0xff, max_bytes), "cudaMemset");  // NaN
    check(cudaDeviceSynchronize(), "sync");
    nvshmem_barrier_all();
    double us = 0;
    if (pe == 0) {
      for (int i = 0; i < 3; ++i) put();
      std::vector<double> times;
      for (int rep = 0; rep < 5; ++rep) {
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        for (int i = 0; i < iters; ++i) put();
        nvshmemx_quiet_on_stream(stream);
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
        times.push_back(ms * 1e3 / iters);
      }
      std::sort(times.begin(), times.end());
      us = times[times.size() / 2];
    }
    check(cudaDeviceSynchronize(), "sync");
    nvshmem_barrier_all();
    if (pe == 0) {
      // PE 1's dst, read through NVSHMEM's mapping of it into this process.
      const void* peer_dst = nvshmem_ptr(dst, 1);
      bool ok = peer_dst != nullptr;
      std::vector<float> got(bytes / sizeof(float));
      if (ok) check(cudaMemcpy(got.data(), peer_dst, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy back");
      for (std::size_t i = 0; ok && i < got.size(); ++i) ok = got[i] == value_of(0, i);
      std::printf("%-10s %-18s %12zu %12.2f %12.2f %6s\n", "one_way", who, bytes, us, bytes / us / 1e3,
                  ok ? "ok" : "WRONG");
      std::fflush(stdout);
      all_ok &= ok;
    }
    nvshmem_barrier_all();
  };

  for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
    measure("nvshmem_put_host", bytes, [&] { nvshmemx_putmem_on_stream(dst, src, bytes, 1, stream); });
#ifdef NVSHMEM_DEVICE_PUT
    const unsigned blocks = static_cast<unsigned>((bytes + kChunk - 1) / kChunk);
    measure("nvshmem_put_block", bytes, [&] {
      put_blocks<<<blocks, 256, 0, stream>>>(reinterpret_cast<char*>(dst), reinterpret_cast<const char*>(src), bytes, 1);
    });
#endif
  }
  nvshmem_free(dst);
  nvshmem_free(src);
  nvshmem_finalize();
  return all_ok ? 0 : 1;
}
