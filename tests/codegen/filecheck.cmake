# Runs irisc on INPUT and FileCheck on its output against INPUT's check lines,
# once for each of INPUT's `// IRISC:` lines (default: one run, --emit=cpp):
#   // IRISC: <irisc options> [| <FileCheck options>]
# e.g. `// IRISC: --emit=tir --stop-after=build | --check-prefix=BUILD`.
#   cmake -DIRISC=... -DFILECHECK=... -DINPUT=file.iris -P filecheck.cmake
file(STRINGS ${INPUT} run_lines REGEX "^// IRISC:")
if(NOT run_lines)
  set(run_lines "// IRISC: --emit=cpp")
endif()
foreach(line IN LISTS run_lines)
  string(REGEX REPLACE "^// IRISC:[ ]*" "" line "${line}")
  string(FIND "${line}" "|" bar)
  set(filecheck_options "")
  if(bar GREATER_EQUAL 0)
    math(EXPR after "${bar} + 1")
    string(SUBSTRING "${line}" ${after} -1 filecheck_line)
    string(SUBSTRING "${line}" 0 ${bar} line)
    separate_arguments(filecheck_options UNIX_COMMAND "${filecheck_line}")
  endif()
  separate_arguments(options UNIX_COMMAND "${line}")
  execute_process(COMMAND ${IRISC} ${options} ${INPUT}
                  COMMAND ${FILECHECK} --dump-input=fail ${filecheck_options} ${INPUT}
                  RESULTS_VARIABLE results OUTPUT_VARIABLE out ERROR_VARIABLE err)
  list(GET results 0 irisc_status)
  list(GET results 1 filecheck_status)
  if(NOT irisc_status EQUAL 0 OR NOT filecheck_status EQUAL 0)
    message(FATAL_ERROR "irisc ${options} ${INPUT} | FileCheck ${filecheck_options}: irisc status ${irisc_status}, "
                        "FileCheck status ${filecheck_status}\n${out}${err}")
  endif()
endforeach()
