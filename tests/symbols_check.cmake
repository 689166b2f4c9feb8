# The libraries' exported symbols carry the project's prefixes (src/README.md,
# "Names"; the 3D libraries' amr_ names are amr3_, src/mesh/dim_names.cmake):
# a helper shared between files without one can clash with a user's own
# symbol once the library is linked into another code.  NM: nm;
# LIBS: the static libraries, "|" between them.
string(REPLACE "|" ";" LIBS "${LIBS}")
set(bad "")
set(n 0)
include(${CMAKE_CURRENT_LIST_DIR}/../src/util/nm_symbols.cmake)
foreach(lib ${LIBS})
  amrdlb_nm_symbols(syms ${lib} "TDRB" -g --defined-only)
  foreach(s ${syms})
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
