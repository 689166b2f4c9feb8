# The libraries' exported symbols carry the project's prefixes (src/README.md,
# "Names"; the 3D libraries' amr_ names are amr3_, src/mesh/dim_names.cmake):
# a helper shared between files without one can clash with a user's own
# symbol once the library is linked into another code.  NM: nm;
# LIBS: the static libraries, "|" between them.
string(REPLACE "|" ";" LIBS "${LIBS}")
set(bad "")
set(n 0)
foreach(lib ${LIBS})
  execute_process(COMMAND ${NM} -g --defined-only ${lib} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${lib} failed (${rc})")
  endif()
  string(REGEX MATCHALL "[0-9a-f]+ [TDRB] [A-Za-z_][A-Za-z0-9_]*" syms "${out}")
  foreach(s ${syms})
    string(REGEX REPLACE "^.* " "" s "${s}")
    math(EXPR n "${n} + 1")
    if(NOT s MATCHES "^(Amr|amr_|amr3_|lb_|Fem|json_)")
      list(APPEND bad "${s} (${lib})")
    endif()
  endforeach()
endforeach()
if(bad)
  list(REMOVE_DUPLICATES bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "exported symbols without the project's prefix:\n  ${bad}")
endif()
message(STATUS "symbols check passed: ${n} exported symbols, all prefixed")
