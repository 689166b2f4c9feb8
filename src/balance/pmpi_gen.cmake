# cmake -DLIST=pmpi.list -DWRAPPERS=pmpi_wrappers.h -DDYNLIST=pmpi.dynlist -P pmpi_gen.cmake
# Turns the profiling layer's one list (pmpi.list: `Name(parameters)` a
# line) into pmpi.c's WRAP lines and the linker's list of the symbols a
# program exports.  A call's arguments are its parameters' names: the last
# identifier of each parameter.
file(STRINGS ${LIST} lines REGEX "^[A-Za-z_]+\\(")
set(wrap "/* Generated from pmpi.list by pmpi_gen.cmake: edit the list. */\n")
set(dyn "/* Generated from pmpi.list by pmpi_gen.cmake: the profiling layer's symbols a program exports. */\n{\n  lb_pmpi_totals;\n  lb_pmpi_enable;\n")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^([A-Za-z_]+)\\((.*)\\)$")
    message(FATAL_ERROR "${LIST}: not `Name(parameters)`: ${line}")
  endif()
  set(name ${CMAKE_MATCH_1})
  set(params ${CMAKE_MATCH_2})
  string(REPLACE "," ";" plist "${params}")
  set(args "")
  foreach(p IN LISTS plist)
    if(NOT p MATCHES "([A-Za-z_][A-Za-z0-9_]*)[ ]*$")
      message(FATAL_ERROR "${LIST}: ${name}: a parameter without a name: '${p}'")
    endif()
    list(APPEND args ${CMAKE_MATCH_1})
  endforeach()
  list(JOIN args ", " args)
  string(APPEND wrap "WRAP(${name}, (${params}), (${args}))\n")
  string(APPEND dyn "  MPI_${name};\n")
endforeach()
string(APPEND dyn "};\n")
# rewritten only when changed, so that a rerun does not rebuild the programs
file(CONFIGURE OUTPUT ${WRAPPERS} CONTENT "${wrap}" @ONLY)
file(CONFIGURE OUTPUT ${DYNLIST} CONTENT "${dyn}" @ONLY)
