# Runs irisc on INPUT with the options of its `// IRISC:` line (default
# --emit=cpp) and FileCheck on the output, against INPUT's CHECK lines.
#   cmake -DIRISC=... -DFILECHECK=... -DINPUT=file.iris -P filecheck.cmake
file(STRINGS ${INPUT} option_lines REGEX "^// IRISC:")
set(options --emit=cpp)
if(option_lines)
  list(GET option_lines 0 line)
  string(REGEX REPLACE "^// IRISC:[ ]*" "" line "${line}")
  separate_arguments(options UNIX_COMMAND "${line}")
endif()
execute_process(COMMAND ${IRISC} ${options} ${INPUT}
                COMMAND ${FILECHECK} --dump-input=fail ${INPUT}
                RESULTS_VARIABLE results OUTPUT_VARIABLE out ERROR_VARIABLE err)
list(GET results 0 irisc_status)
list(GET results 1 filecheck_status)
if(NOT irisc_status EQUAL 0 OR NOT filecheck_status EQUAL 0)
  message(FATAL_ERROR "irisc ${options} ${INPUT}: status ${irisc_status}; FileCheck: status ${filecheck_status}\n${out}${err}")
endif()
