# compat_api_slots(<header> <out_names> <out_nodes>): the slots of the
# aotrun_api table that <header> declares, in order, and for each the symbol
# version node of its API version. Slot groups are introduced in the struct
# by comments such as "/* 1.0 */"; a group's functions live in node
# AOTRUN_<major>.<minor>. The slot "version_number" is aotrun_version(); every
# other slot <name> is aotrun_<name>().
function(compat_api_slots header out_names out_nodes)
  file(STRINGS "${header}" lines)
  set(in_struct OFF)
  set(node "")
  set(names "")
  set(nodes "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^typedef struct aotrun_api {")
      set(in_struct ON)
    elseif(in_struct AND line MATCHES "^} aotrun_api;")
      break()
    elseif(in_struct AND line MATCHES "/\\* ([0-9]+)\\.([0-9]+) \\*/")
      set(node "AOTRUN_${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
    elseif(in_struct AND line MATCHES "\\(\\*([A-Za-z0-9_]+)\\)")
      if(node STREQUAL "")
        message(FATAL_ERROR "${header}: slot ${CMAKE_MATCH_1} of aotrun_api precedes any /* <version> */ comment")
      endif()
      list(APPEND names ${CMAKE_MATCH_1})
      list(APPEND nodes ${node})
    endif()
  endforeach()
  if(NOT names)
    message(FATAL_ERROR "${header}: no aotrun_api slots found")
  endif()
  set(${out_names} ${names} PARENT_SCOPE)
  set(${out_nodes} ${nodes} PARENT_SCOPE)
endfunction()

# compat_api_symbol(<slot> <out>): the exported function behind a slot.
function(compat_api_symbol slot out)
  if(slot STREQUAL "version_number")
    set(${out} aotrun_version PARENT_SCOPE)
  else()
    set(${out} aotrun_${slot} PARENT_SCOPE)
  endif()
endfunction()
