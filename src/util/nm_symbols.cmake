# amrdlb_nm_symbols(OUT LIBS TYPES NM_ARGS...): the names `${NM} NM_ARGS LIB`
# lists with a type letter in TYPES (the inside of a regex class: "TDRB",
# "U", "A-Za-z"), for every LIB of LIBS ("|" or ";" between them), each
# name once.  The one reading of nm for the scripts that check or
# derive symbols: the 3D names (src/mesh/dim_names.cmake), the profiling
# layer's list (tests/balance/pmpi_list_check.cmake), the prefixes and the
# 2D/3D split (tests/symbols_check.cmake, tests/dim_symbols_check.cmake).
function(amrdlb_nm_symbols out libs types)
  string(REPLACE "|" ";" libs "${libs}")
  set(names "")
  foreach(lib ${libs})
    execute_process(COMMAND ${NM} ${ARGN} ${lib} RESULT_VARIABLE rc OUTPUT_VARIABLE text)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${NM} ${ARGN} ${lib} failed (${rc})")
    endif()
    # a line: the address (none for an undefined symbol), the type, the name
    string(REGEX MATCHALL "(^|\n)([0-9a-f]+)? +[${types}] [A-Za-z_][A-Za-z0-9_]*" syms "${text}")
    list(TRANSFORM syms REPLACE "^.* " "")
    # names that begin with two underscores are the compiler's, never
    # ours: AddressSanitizer's one-definition indicators (__odr_asan.NAME,
    # one per exported variable) in a -fsanitize=address build
    list(FILTER syms EXCLUDE REGEX "^__")
    list(APPEND names ${syms})
  endforeach()
  list(REMOVE_DUPLICATES names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()
