# The CMake package `Iris`: the names users see and what `cmake --install` puts
# in place. Included by the top-level CMakeLists.txt after compiler/ and runtime/.
#
# A user's project gets the same targets and the same iris_add_kernels
# (cmake/IrisKernels.cmake) in each of the three ways Iris can be used:
#
#   Iris::irisc            the compiler; Iris::irisc-<tool> its helper programs
#                          (irisc runs them from its own folder)
#   Iris::runtime          the CPU runtime (iris_runtime_cpu)
#   Iris::runtime_mpi      run_mpi on the CPU (iris_runtime_cpu_mpi), when MPI is
#                          found (installed: the component `mpi`)
#   Iris::gpu_headers      what GPU code including <iris/kernel.hpp> needs  } built when
#   Iris::runtime_gpu      the GPU runtime (iris_runtime_gpu)               } nvcc and the
#   Iris::runtime_gpu_mpi  run_mpi (iris_runtime_gpu_mpi)                   } HIP headers are found
#                          (and MPI; installed: the component `mpi`, as it needs MPI)
#   Iris::runtime_gpu_nvshmem  run_mpi with the nvshmem provider (iris_runtime_gpu_nvshmem),
#                          built where IRIS_NVSHMEM_HOME finds NVSHMEM (installed: the
#                          component `nvshmem`, which finds NVSHMEM again: IrisNvshmem.cmake)
#   Iris::runtime_amd      the GPU runtime for AMD (iris_runtime_amd)       } built when clang 19,
#   Iris::runtime_amd_mpi  run_mpi on AMD (iris_runtime_amd_mpi)            } HIP and the device
#                          (and MPI, as above)                              } libraries are found
#
# build tree      ALIAS targets with those names.
# subproject      (add_subdirectory) the same, plus a package redirect: the
#                 user's find_package(Iris CONFIG) finds this build, so one
#                 CMakeLists.txt works both ways.
# installed       cmake --install <build> --prefix <prefix> writes
#                   bin/                      irisc and its helpers
#                   lib/                      the runtime libraries
#                   include/iris/             the runtime headers, and hip_include/hip,
#                                             the link to the HIP headers (GPU target);
#                                             the package's .iris modules (gemm.iris, ccl.iris),
#                                             which irisc finds from bin/ without -I;
#                                             fused.hpp, the fused operations, with
#                                             fused/: their kernels (fused_gemm.iris) and
#                                             the C++ irisc made of them (*.iris.hpp);
#                                             ccl.hpp, the collectives, with ccl/ the same
#                                             way (ccl_kernels.iris); library.hpp, what
#                                             both share (iris::Workspace), and
#                                             library_variant.hpp, which of their
#                                             kernels' variants both take
#                   lib/cmake/Iris/           IrisConfig.cmake (+Version), IrisTargets.cmake,
#                                             IrisMpiTargets.cmake and IrisNvshmemTargets.cmake
#                                             (imported targets), IrisKernels.cmake,
#                                             IrisNvshmem.cmake
include(CMakePackageConfigHelpers)
include(${CMAKE_CURRENT_LIST_DIR}/IrisKernels.cmake)

set(IRIS_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Iris)

# The executables of compiler/ (and its subfolders) named irisc or irisc-<tool>:
# irisc and the helper programs it starts, which install next to it.
function(iris_compiler_tools dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  set(tools)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE" AND target MATCHES "^irisc(-.+)?$")
      list(APPEND tools ${target})
    endif()
  endforeach()
  foreach(subdir ${subdirs})
    iris_compiler_tools(${subdir} more)
    list(APPEND tools ${more})
  endforeach()
  set(${out} ${tools} PARENT_SCOPE)
endfunction()
iris_compiler_tools(${PROJECT_SOURCE_DIR}/compiler iris_tools)
# iris_add_kernels makes generated files depend on these targets in a build
# tree: all but the language server, which irisc never starts.
set(iris_kernel_tools ${iris_tools})
list(REMOVE_ITEM iris_kernel_tools irisc-lsp)
set_property(GLOBAL PROPERTY IRIS_COMPILER_TOOLS ${iris_kernel_tools})

# Project target -> name in the package (Iris::<name>).
set(iris_libraries
  iris_runtime_cpu runtime
  iris_gpu_headers gpu_headers
  iris_runtime_gpu runtime_gpu
  iris_runtime_amd runtime_amd)
foreach(tool ${iris_tools})
  add_executable(Iris::${tool} ALIAS ${tool})
endforeach()
# Exports the existing ones of `targets` (pairs: target, name) in `export`.
function(iris_export export targets)
  set(exported)
  while(targets)
    list(POP_FRONT targets target name)
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
      add_library(Iris::${name} ALIAS ${target})
      list(APPEND exported ${target})
    endif()
  endwhile()
  install(TARGETS ${exported} ${ARGN} EXPORT ${export}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT ${export} NAMESPACE Iris:: DESTINATION ${IRIS_PACKAGE_DIR})
endfunction()
iris_export(IrisTargets "${iris_libraries}" ${iris_tools})
# Apart, as only the component `mpi` looks for MPI (which needs the C language).
if(TARGET iris_runtime_cpu_mpi OR TARGET iris_runtime_gpu_mpi OR TARGET iris_runtime_amd_mpi)
  iris_export(IrisMpiTargets
              "iris_runtime_cpu_mpi;runtime_mpi;iris_runtime_gpu_mpi;runtime_gpu_mpi;iris_runtime_amd_mpi;runtime_amd_mpi")
endif()
# Apart again: only the component `nvshmem` looks for NVSHMEM, and Iris::nvshmem,
# which the library links, is found anew where the package is used.
if(TARGET iris_runtime_gpu_nvshmem)
  iris_export(IrisNvshmemTargets "iris_runtime_gpu_nvshmem;runtime_gpu_nvshmem")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/iris DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The host libraries' kernels as irisc generated them (runtime/CMakeLists.txt),
# next to their .iris file and the header that includes them (<iris/fused.hpp>:
# fused/*.iris.hpp, <iris/ccl.hpp>: ccl/*.iris.hpp).
install(DIRECTORY ${IRIS_LIBRARY_GENERATED}/iris/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/iris
        FILES_MATCHING PATTERN "*.iris.hpp")
if(TARGET iris_gpu_headers)
  # The `hip` link itself (an absolute link to the HIP headers Iris was built with).
  install(DIRECTORY ${IRIS_HIP_LINK_DIR}/ DESTINATION ${IRIS_HIP_LINK_INSTALL_DIR})
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/IrisConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/IrisConfig.cmake
                              INSTALL_DESTINATION ${IRIS_PACKAGE_DIR})
# 0.x: a minor version may change the language, so only the same minor version matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/IrisConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/IrisConfig.cmake
              ${PROJECT_BINARY_DIR}/package/IrisConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/IrisKernels.cmake
              ${CMAKE_CURRENT_LIST_DIR}/IrisNvshmem.cmake
        DESTINATION ${IRIS_PACKAGE_DIR})

if(NOT PROJECT_IS_TOP_LEVEL)
  # Everything is defined already; the redirect only tells find_package so.
  file(WRITE ${CMAKE_FIND_PACKAGE_REDIRECTS_DIR}/IrisConfig.cmake
       "# Written by Iris (cmake/IrisPackage.cmake): Iris is a subproject of this build, its\n"
       "# targets and iris_add_kernels are defined by add_subdirectory.\n")
  configure_file(${PROJECT_BINARY_DIR}/package/IrisConfigVersion.cmake
                 ${CMAKE_FIND_PACKAGE_REDIRECTS_DIR}/IrisConfigVersion.cmake COPYONLY)
endif()
