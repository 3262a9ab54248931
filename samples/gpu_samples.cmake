# iris_gpu_samples(<platform> <suffix> <runtime> <mpi runtime>
#                  NAMES <sample>... [OPTIONS <compile option>...])
#
# The samples' host programs built for a GPU platform of iris_add_kernels
# (nvidia, amd): for each sample <name> (its kernels, iris_sample_kernels below,
# and host/<name>.cpp, next to this file)
#   sample_<name>_<suffix>      ranks as threads on the visible GPUs (run_threads),
#                               linked against <runtime>
#   sample_<name>_<suffix>_mpi  one process per rank under mpirun (run_mpi), when
#                               the target <mpi runtime> exists
# Used by samples/CMakeLists.txt (nvidia) and by tests/amd/samples, a project
# built against an installed Iris (amd).
#
# iris_sample_kernels(<name> <out>) sets <out> to the .iris file of sample
# <name>: <name>.iris next to this file; for fused_gemm the kernels of the fused
# operations (<iris/fused.hpp>), which live with the runtime headers and are
# installed with them (runtime/include/iris/fused/fused_gemm.iris).
function(iris_sample_kernels name out)
  set(samples ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  if(name STREQUAL "fused_gemm")
    get_filename_component(kernels ${samples}/../runtime/include/iris/fused/fused_gemm.iris ABSOLUTE)
    set(${out} ${kernels} PARENT_SCOPE)
  else()
    set(${out} ${samples}/${name}.iris PARENT_SCOPE)
  endif()
endfunction()

function(iris_gpu_samples platform suffix runtime mpi_runtime)
  cmake_parse_arguments(PARSE_ARGV 4 ARG "" "" "NAMES;OPTIONS")
  set(variants ${suffix} ${runtime})
  if(TARGET ${mpi_runtime})
    list(APPEND variants ${suffix}_mpi ${mpi_runtime})
  endif()
  set(samples ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  foreach(name ${ARG_NAMES})
    set(remaining ${variants})
    while(remaining)
      list(POP_FRONT remaining variant library)
      set(target sample_${name}_${variant})
      add_executable(${target})
      iris_sample_kernels(${name} kernels)
      iris_add_kernels(${target} PLATFORM ${platform} RUNTIME ${library} ${kernels}
                       SOURCES ${samples}/host/${name}.cpp)
      target_include_directories(${target} PRIVATE ${samples}/host)
      target_compile_options(${target} PRIVATE ${ARG_OPTIONS})
      if(library STREQUAL mpi_runtime)
        target_compile_definitions(${target} PRIVATE IRIS_SAMPLE_MPI)
      endif()
    endwhile()
  endforeach()
endfunction()
