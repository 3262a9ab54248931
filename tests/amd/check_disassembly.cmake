# Runs FileCheck on the disassembly of each code object in a fat object of the
# AMD compile: llvm-objcopy takes the offload bundle out of OBJECT's
# .hip_fatbin section; for every architecture, clang-offload-bundler takes its
# code object out of the bundle, llvm-objdump disassembles it (names
# demangled), and FileCheck reads that against CHECKS with the prefixes CHECK
# and the architecture's name in capitals (GFX90A, GFX942), for what its ISA
# spells differently.
#   cmake -DOBJCOPY=... -DBUNDLER=... -DOBJDUMP=... -DFILECHECK=... -DARCHITECTURES=gfx90a,gfx942
#         -DOBJECT=x.o -DCHECKS=x.check -DWORK=<folder for the code objects> -P check_disassembly.cmake
string(REPLACE "," ";" architectures "${ARCHITECTURES}")
get_filename_component(name ${OBJECT} NAME_WE)
file(MAKE_DIRECTORY ${WORK})
set(bundle ${WORK}/${name}.hip_fatbin)
execute_process(COMMAND ${OBJCOPY} --dump-section=.hip_fatbin=${bundle} ${OBJECT} ${WORK}/${name}.copy.o
                RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${OBJECT}: no device code (.hip_fatbin): ${err}")
endif()
foreach(arch IN LISTS architectures)
  set(code_object ${WORK}/${name}.${arch}.co)
  execute_process(COMMAND ${BUNDLER} --unbundle --type=o --targets=hipv4-amdgcn-amd-amdhsa--${arch}
                          --input=${bundle} --output=${code_object}
                  RESULT_VARIABLE status ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${OBJECT}: no code object for ${arch}: ${err}")
  endif()
  string(TOUPPER ${arch} prefix)
  execute_process(COMMAND ${OBJDUMP} --disassemble --demangle ${code_object}
                  COMMAND ${FILECHECK} --dump-input=fail --check-prefixes=CHECK,${prefix} ${CHECKS}
                  RESULTS_VARIABLE results OUTPUT_VARIABLE out ERROR_VARIABLE err)
  list(GET results 0 objdump_status)
  list(GET results 1 filecheck_status)
  if(NOT objdump_status EQUAL 0 OR NOT filecheck_status EQUAL 0)
    message(FATAL_ERROR "${OBJECT} (${arch}): llvm-objdump status ${objdump_status}, FileCheck status "
                        "${filecheck_status} against ${CHECKS}\n${out}${err}")
  endif()
endforeach()
