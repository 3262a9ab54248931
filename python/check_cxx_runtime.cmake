# Fails the build of one of iris_torch's libraries (LIBRARY) where it holds
# code of its own from libstdc++, removes it, and names the archive members the
# link took that code from (MAP, the linker's map of LIBRARY).
#   cmake -DLIBRARY=<.so> -DMAP=<.map> -DNM=<nm> -P check_cxx_runtime.cmake
#
# Why: torch's process has loaded libstdc++.so.6 already. A second copy of its
# locale code in one library keeps locale ids of its own, and the first
# message that formats a number through it (an error's, for instance) reads
# the shared library's facets with the copy's ids and crashes. That is how the
# GPU build crashed on its first error on an H100 (2026-12-05): the fault was in
# libiris_torch.so's own copy of std::codecvt<char16_t>, reached from
# std::ostream::_M_insert<unsigned long>.
#
# The symbols looked for are defined by libstdc++ alone: its headers declare
# them extern (explicit instantiations and out-of-line members), so no object
# compiled against them defines them.
set(runtime_symbols
    _ZNSo9_M_insertImEERSoT_  # std::ostream::_M_insert<unsigned long>
    _ZNSt6locale7classicEv    # std::locale::classic()
    _ZNSt8ios_base4InitC1Ev)  # std::ios_base::Init::Init()
execute_process(COMMAND ${NM} --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE status ERROR_VARIABLE nm_error)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "iris_torch: ${NM} cannot read ${LIBRARY}: ${nm_error}")
endif()
set(found)
foreach(symbol IN LISTS runtime_symbols)
  if(symbols MATCHES " [TtWw] ${symbol}\n")
    list(APPEND found ${symbol})
  endif()
endforeach()
if(NOT found)
  return()
endif()

# The map's first section lists each archive member the link took, under the
# line "Archive member included to satisfy reference by file (symbol)": the
# member, then the file and symbol that needed it, on the same line where the
# member's name is short, else on the next, indented. The first dozen members
# of a C++ runtime are shown, each with what needed it: the first is the one
# that brought the runtime in.
set(members "")
set(count 0)
if(EXISTS ${MAP})
  file(STRINGS ${MAP} lines)
  set(in_section FALSE)
  set(member "")  # a member of the runtime whose reason is on the next line
  foreach(line IN LISTS lines)
    if(line MATCHES "^Archive member included")
      set(in_section TRUE)
    elseif(NOT in_section)
    elseif(line MATCHES "^(Discarded input sections|As-needed library|Allocating common|Memory Configuration|Linker script)")
      break()
    elseif(line MATCHES "^[ \t]+([^ \t].*)$")
      if(NOT member STREQUAL "")
        string(APPEND members "\n  ${member} needed by ${CMAKE_MATCH_1}")
        set(member "")
      endif()
    elseif(line MATCHES "^([^ \t]+)[ \t]*(.*)$")
      set(name ${CMAKE_MATCH_1})
      set(reason "${CMAKE_MATCH_2}")
      set(member "")
      if(name MATCHES "(stdc|supc)\\+\\+[^/]*\\.a\\(")
        math(EXPR count "${count} + 1")
        if(count GREATER 12)
        elseif(reason STREQUAL "")
          set(member ${name})
        else()
          string(APPEND members "\n  ${name} needed by ${reason}")
        endif()
      endif()
    endif()
  endforeach()
  if(count GREATER 12)
    math(EXPR more "${count} - 12")
    string(APPEND members "\n  and ${more} more")
  endif()
endif()
if(members STREQUAL "")
  set(members "\n  (no libstdc++ archive member in ${MAP}: look for the symbols' definitions in it)")
endif()
list(JOIN found ", " found)
file(REMOVE ${LIBRARY})  # so that the next build links it again
message(FATAL_ERROR
  "iris_torch: ${LIBRARY} holds a copy of libstdc++'s own code (it defines ${found}). "
  "In torch's process, which has loaded libstdc++.so.6, that copy crashes the first message "
  "that prints a number (docs/python.md, \"Limits\"). The link took these members of a static "
  "C++ runtime:${members}\n"
  "Link the C++ runtime as a shared library: no -static-libstdc++, and no libstdc++.a or "
  "libstdc++_nonshared.a on the link line.")
