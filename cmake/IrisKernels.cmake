# iris_generate_kernels(<target> [CHECKED] <file.iris>...)
#
# Runs irisc on each .iris file, writing <name>.iris.hpp into the target's
# binary directory, makes <target> depend on the generated headers and adds
# that directory to its include path. CHECKED generates code
# that checks heap accesses, translations and (on the CPU) data races at run time
# (irisc --checked), into a folder of its own, so that one directory can build a
# file both ways.
function(iris_generate_kernels target)
  cmake_parse_arguments(ARG "CHECKED" "" "" ${ARGN})
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/iris_generated)
  set(flags --emit=cpp)
  if(ARG_CHECKED)
    set(out_dir ${out_dir}/checked)
    list(APPEND flags --checked)
  endif()
  set(headers)
  foreach(source ${ARG_UNPARSED_ARGUMENTS})
    get_filename_component(abs ${source} ABSOLUTE)
    get_filename_component(name ${source} NAME_WE)
    set(header ${out_dir}/${name}.iris.hpp)
    add_custom_command(
      OUTPUT ${header}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND $<TARGET_FILE:irisc> ${flags} -o ${header} ${abs}
      DEPENDS irisc ${abs}
      COMMENT "irisc ${source}"
      VERBATIM)
    list(APPEND headers ${header})
  endforeach()
  target_sources(${target} PRIVATE ${headers})
  target_include_directories(${target} PRIVATE ${out_dir})
endfunction()
