# Runs CMD (a ;-list) and checks its exit status and output.
#   EXPECT_STATUS        the exit status
#   EXPECT_STDOUT/ERR    a regular expression the output must match
#   STDIN                a file fed to standard input
#   EXPECT_FILE(_CONTENT) a file the command must write, and a regex it must hold
if(STDIN)
  set(input_args INPUT_FILE ${STDIN})
endif()
if(EXPECT_FILE)
  file(REMOVE ${EXPECT_FILE})
endif()
execute_process(COMMAND ${CMD} ${input_args} RESULT_VARIABLE status
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${status}" STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECT_STATUS}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}':\n${out}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}':\n${err}")
endif()
if(EXPECT_FILE)
  file(READ ${EXPECT_FILE} content)
  if(NOT content MATCHES "${EXPECT_FILE_CONTENT}")
    message(FATAL_ERROR "${EXPECT_FILE} does not match '${EXPECT_FILE_CONTENT}':\n${content}")
  endif()
endif()
