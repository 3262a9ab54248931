# NVSHMEM as Iris uses it: the imported target Iris::nvshmem, its headers, its
# device library (libnvshmem_device.a, which kernels built with the far path
# device-link) and its host library (libnvshmem_host.so.3). Included by
# runtime/CMakeLists.txt, where Iris is built, and by the installed package's
# component `nvshmem` (IrisConfig.cmake), so that a project using an installed
# Iris finds NVSHMEM again on its own machine instead of through paths baked
# into the package.
#
#   iris_find_nvshmem(<home> <found-variable>)
#
# <home> is NVSHMEM's folder, with include/ and lib/ (the wheel
# nvidia-nvshmem-cu13 puts them in site-packages/nvidia/nvshmem). Sets
# <found-variable> to TRUE and defines Iris::nvshmem where all three are found
# there, FALSE otherwise.
function(iris_find_nvshmem home found)
  set(${found} FALSE PARENT_SCOPE)
  if(TARGET Iris::nvshmem)
    set(${found} TRUE PARENT_SCOPE)
    return()
  endif()
  # (NO_CACHE: the search leaves no cache entries behind in a user's project.)
  find_path(include_dir nvshmem.h HINTS ${home}/include NO_DEFAULT_PATH NO_CACHE)
  find_library(device_library NAMES libnvshmem_device.a HINTS ${home}/lib NO_DEFAULT_PATH NO_CACHE)
  find_library(host_library NAMES nvshmem_host libnvshmem_host.so.3 HINTS ${home}/lib NO_DEFAULT_PATH NO_CACHE)
  if(NOT include_dir OR NOT device_library OR NOT host_library)
    return()
  endif()
  add_library(Iris::nvshmem INTERFACE IMPORTED GLOBAL)
  set_target_properties(Iris::nvshmem PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${include_dir}
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${include_dir}
    INTERFACE_LINK_LIBRARIES "${device_library};${host_library}")
  set(${found} TRUE PARENT_SCOPE)
endfunction()
