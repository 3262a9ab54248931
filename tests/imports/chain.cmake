# Writes a chain of COUNT modules into DIR, m0.iris importing m1.iris and so
# on, and runs irisc (IRISC) on m0.iris, expecting EXPECT_STATUS and
# EXPECT_STDERR (run_expect.cmake).
cmake_policy(VERSION 3.25)
file(REMOVE_RECURSE ${DIR})
math(EXPR last "${COUNT} - 1")
foreach(i RANGE ${last})
  math(EXPR next "${i} + 1")
  set(text "const C${i} = ${i};\n")
  if(i LESS last)
    set(text "import \"m${next}.iris\";\n${text}")
  endif()
  file(WRITE ${DIR}/m${i}.iris "${text}")
endforeach()
set(CMD ${IRISC} ${DIR}/m0.iris)
include(${CMAKE_CURRENT_LIST_DIR}/../run_expect.cmake)
