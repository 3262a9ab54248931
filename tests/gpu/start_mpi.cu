// run_mpi's answers to bad input on the GPU target, under mpirun: each is an
// iris::Error on every rank, thrown before any GPU is touched (settings, node
// teams and provider come first), so ctest runs them on machines without one.
// Rank 0 prints "run_mpi failed on N of M ranks: <rank 0's error>", or
// "run_mpi started on M ranks" where the world starts and ends (a GPU run).
#include <mpi.h>

#include <iris/host.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string failure;
  try {
    iris::run_mpi(std::size_t{1} << 20, [](iris::Rank&) {});
  } catch (const iris::Error& e) {
    failure = e.what();
  }
  int failed = failure.empty() ? 0 : 1, failed_ranks = 0;
  MPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (failed_ranks > 0) std::printf("run_mpi failed on %d of %d ranks: %s\n", failed_ranks, size, failure.c_str());
    else std::printf("run_mpi started on %d ranks\n", size);
  }
  MPI_Finalize();
  return failed_ranks > 0 ? 1 : 0;
}
