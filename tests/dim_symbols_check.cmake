# The 2D and the 3D libraries define no global symbol in common, so that one
# program (lbbench) links both: the 3D names are renamed
# (src/mesh/dim_names.cmake), and a name that escapes the renaming is
# listed here.  NM: nm; LIBS2, LIBS3: the 2D and the 3D static libraries,
# "|" between them.
include(${CMAKE_CURRENT_LIST_DIR}/../src/util/nm_symbols.cmake)
amrdlb_nm_symbols(names2 "${LIBS2}" "A-Za-z" -g --defined-only)
amrdlb_nm_symbols(names3 "${LIBS3}" "A-Za-z" -g --defined-only)
set(both "")
foreach(s ${names3})
  list(FIND names2 ${s} i)
  if(i GREATER -1)
    list(APPEND both ${s})
  endif()
endforeach()
list(LENGTH names2 n2)
list(LENGTH names3 n3)
if(both)
  string(REPLACE ";" "\n  " both "${both}")
  message(FATAL_ERROR "defined by a 2D and a 3D library both:\n  ${both}")
endif()
message(STATUS "2D and 3D symbols apart: ${n2} in the 2D libraries, ${n3} in the 3D ones, none in both")
