# aotrun_add_package(): build a model package (a shared library exporting the
# package ABI) and, optionally, assemble its package directory.
#
#   aotrun_add_package(<target>
#     SOURCES <file>...
#     [TARGET_ABI 1.0|1.1]          # default 1.1; defines AOTRUN_PKG_TARGET_ABI
#     [LINK_LIBRARIES <lib>...]
#     [WEIGHTS <file>...]           # safetensors files copied into the directory
#     [DEPENDS <target>...]         # targets that produce the weights
#     [PACKAGE_NAME <name>]         # manifest "name"; default <target>
#     [PACKAGE_DIR <dir>]           # relative to ${CMAKE_BINARY_DIR}/packages, or absolute
#     [DEVICE cpu|cuda])            # manifest "device"; default cpu
#
# The library (lib<target>.so, a MODULE) is written to
# ${CMAKE_BINARY_DIR}/packages/ — that file alone is a bare package. With
# PACKAGE_DIR (or WEIGHTS: then the directory defaults to PACKAGE_NAME) a
# custom target <target>_package assembles <dir>/ = the library + the weights
# + manifest.json (sha256 of every file) by running this file in script mode.
# Everything is part of `all`; target `aotrun_packages` depends on every
# package. Packages compile with -fvisibility=hidden and link with a version
# script exporting only symbols named aotrun_*; extra C exports must use
# that prefix.
#
#   aotrun_package_directory(<name> LIBRARY_TARGET <target>
#     [WEIGHTS ...] [DEPENDS ...] [TARGET_ABI ...] [DEVICE ...] [PACKAGE_DIR ...]
#     [BREAK bad_hash|bad_manifest|missing_weights])
# assembles a directory for an existing library target; BREAK makes the
# deliberately broken directories the loader tests need.

# --- script mode: assemble one package directory ---------------------------
if(CMAKE_SCRIPT_MODE_FILE AND AOTRUN_PACKAGE_ASSEMBLE)
  include("${AOTRUN_PACKAGE_ASSEMBLE}")  # sets PKG_* variables (file(GENERATE)d)

  function(_aotrun_json_string out value)
    string(REPLACE "\\" "\\\\" value "${value}")
    string(REPLACE "\"" "\\\"" value "${value}")
    set(${out} "\"${value}\"" PARENT_SCOPE)
  endfunction()

  file(MAKE_DIRECTORY "${PKG_DIR}")
  get_filename_component(lib_name "${PKG_LIBRARY}" NAME)
  file(COPY_FILE "${PKG_LIBRARY}" "${PKG_DIR}/${lib_name}" ONLY_IF_DIFFERENT)
  set(files "${lib_name}")
  set(weight_names "")
  foreach(w IN LISTS PKG_WEIGHTS)
    get_filename_component(w_name "${w}" NAME)
    list(APPEND weight_names "${w_name}")
    list(APPEND files "${w_name}")
    file(COPY_FILE "${w}" "${PKG_DIR}/${w_name}" ONLY_IF_DIFFERENT)
  endforeach()

  set(hashes "")
  foreach(f IN LISTS files)
    file(SHA256 "${PKG_DIR}/${f}" h)
    if(PKG_BREAK STREQUAL "bad_hash" AND f STREQUAL lib_name)
      string(SHA256 h "deliberately not the hash of ${f}")
    endif()
    _aotrun_json_string(k "${f}")
    list(APPEND hashes "    ${k}: \"${h}\"")
  endforeach()
  if(PKG_BREAK STREQUAL "missing_weights")
    foreach(w IN LISTS weight_names)
      file(REMOVE "${PKG_DIR}/${w}")
    endforeach()
  endif()

  set(weights_json "")
  foreach(w IN LISTS weight_names)
    _aotrun_json_string(q "${w}")
    list(APPEND weights_json "${q}")
  endforeach()
  list(JOIN weights_json ", " weights_json)
  list(JOIN hashes ",\n" hashes)
  _aotrun_json_string(name_json "${PKG_NAME}")
  _aotrun_json_string(lib_json "${lib_name}")
  set(manifest "{\n  \"format\": \"aotrun-package\",\n  \"format_version\": 1,\n  \"name\": ${name_json},\n  \"abi_version\": \"${PKG_ABI}\",\n  \"device\": \"${PKG_DEVICE}\",\n  \"library\": ${lib_json},\n  \"weights\": [${weights_json}],\n  \"files\": {\n${hashes}\n  }\n}\n")
  if(PKG_BREAK STREQUAL "bad_manifest")
    # Cut off mid-object: not valid JSON.
    string(FIND "${manifest}" "\"library\"" cut)
    string(SUBSTRING "${manifest}" 0 ${cut} manifest)
    string(APPEND manifest "\"library\": \"${lib_name}\n")
  endif()
  file(WRITE "${PKG_DIR}/manifest.json.tmp" "${manifest}")
  file(RENAME "${PKG_DIR}/manifest.json.tmp" "${PKG_DIR}/manifest.json")
  return()
endif()

# --- configure mode -----------------------------------------------------------
include_guard(GLOBAL)
set(_AOTRUN_PACKAGE_MODULE "${CMAKE_CURRENT_LIST_FILE}")

function(_aotrun_packages_root out)
  set(${out} "${CMAKE_BINARY_DIR}/packages" PARENT_SCOPE)
endfunction()

function(_aotrun_register_package_target tgt)
  if(NOT TARGET aotrun_packages)
    # Created on first use, in whichever directory that is; targets are global.
    add_custom_target(aotrun_packages)
  endif()
  add_dependencies(aotrun_packages ${tgt})
endfunction()

function(_aotrun_abi_define out abi)
  if(abi STREQUAL "1.0")
    set(${out} 10 PARENT_SCOPE)
  elseif(abi STREQUAL "1.1")
    set(${out} 11 PARENT_SCOPE)
  else()
    message(FATAL_ERROR "aotrun package: TARGET_ABI must be 1.0 or 1.1, got '${abi}'")
  endif()
endfunction()

function(aotrun_package_directory name)
  cmake_parse_arguments(PARSE_ARGV 1 P "" "LIBRARY_TARGET;TARGET_ABI;DEVICE;PACKAGE_DIR;BREAK"
                        "WEIGHTS;DEPENDS")
  if(NOT P_LIBRARY_TARGET)
    message(FATAL_ERROR "aotrun_package_directory(${name}): LIBRARY_TARGET is required")
  endif()
  if(NOT P_TARGET_ABI)
    set(P_TARGET_ABI 1.1)
  endif()
  _aotrun_abi_define(_unused "${P_TARGET_ABI}")
  if(NOT P_DEVICE)
    set(P_DEVICE cpu)
  endif()
  if(NOT P_DEVICE MATCHES "^(cpu|cuda)$")
    message(FATAL_ERROR "aotrun_package_directory(${name}): DEVICE must be cpu or cuda")
  endif()
  if(P_BREAK AND NOT P_BREAK MATCHES "^(bad_hash|bad_manifest|missing_weights)$")
    message(FATAL_ERROR "aotrun_package_directory(${name}): unknown BREAK '${P_BREAK}'")
  endif()
  _aotrun_packages_root(root)
  if(NOT P_PACKAGE_DIR)
    set(P_PACKAGE_DIR "${name}")
  endif()
  if(IS_ABSOLUTE "${P_PACKAGE_DIR}")
    set(dir "${P_PACKAGE_DIR}")
  else()
    set(dir "${root}/${P_PACKAGE_DIR}")
  endif()
  set(weights "")
  foreach(w IN LISTS P_WEIGHTS)
    get_filename_component(w "${w}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    list(APPEND weights "${w}")
  endforeach()

  set(config "${CMAKE_CURRENT_BINARY_DIR}/aotrun_package_${name}.cmake")
  file(GENERATE OUTPUT "${config}" CONTENT
"set(PKG_NAME [==[${name}]==])
set(PKG_DIR [==[${dir}]==])
set(PKG_LIBRARY [==[$<TARGET_FILE:${P_LIBRARY_TARGET}>]==])
set(PKG_WEIGHTS [==[${weights}]==])
set(PKG_ABI [==[${P_TARGET_ABI}]==])
set(PKG_DEVICE [==[${P_DEVICE}]==])
set(PKG_BREAK [==[${P_BREAK}]==])
")
  add_custom_command(
    OUTPUT "${dir}/manifest.json"
    COMMAND ${CMAKE_COMMAND} -DAOTRUN_PACKAGE_ASSEMBLE=${config} -P ${_AOTRUN_PACKAGE_MODULE}
    DEPENDS ${P_LIBRARY_TARGET} ${weights} ${P_DEPENDS} "${config}" "${_AOTRUN_PACKAGE_MODULE}"
    COMMENT "Assembling package directory ${P_PACKAGE_DIR}"
    VERBATIM)
  add_custom_target(${name}_package ALL DEPENDS "${dir}/manifest.json")
  if(P_DEPENDS)
    add_dependencies(${name}_package ${P_DEPENDS})
  endif()
  _aotrun_register_package_target(${name}_package)
endfunction()

function(aotrun_add_package tgt)
  cmake_parse_arguments(PARSE_ARGV 1 P "" "TARGET_ABI;PACKAGE_NAME;PACKAGE_DIR;DEVICE"
                        "SOURCES;LINK_LIBRARIES;WEIGHTS;DEPENDS")
  if(NOT P_SOURCES)
    message(FATAL_ERROR "aotrun_add_package(${tgt}): SOURCES is required")
  endif()
  if(NOT P_TARGET_ABI)
    set(P_TARGET_ABI 1.1)
  endif()
  _aotrun_abi_define(abi_define "${P_TARGET_ABI}")
  if(NOT P_PACKAGE_NAME)
    set(P_PACKAGE_NAME ${tgt})
  endif()
  _aotrun_packages_root(root)

  add_library(${tgt} MODULE ${P_SOURCES})
  target_link_libraries(${tgt} PRIVATE aotrun_sdk ${P_LINK_LIBRARIES})
  target_compile_definitions(${tgt} PRIVATE AOTRUN_PKG_TARGET_ABI=${abi_define})
  set_target_properties(${tgt} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY "${root}")
  target_compile_options(${tgt} PRIVATE -Wall -Wextra
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-fno-gnu-unique>)
  # Only aotrun_* leaves the library: template instantiations of the standard
  # library would otherwise be exported (and GNU-unique ones block dlclose).
  set(map "${CMAKE_BINARY_DIR}/aotrun_package_exports.map")
  if(NOT EXISTS "${map}")
    file(WRITE "${map}" "{\n  global: aotrun_*;\n  local: *;\n};\n")
  endif()
  target_link_options(${tgt} PRIVATE "LINKER:--version-script=${map}")
  set_property(TARGET ${tgt} APPEND PROPERTY LINK_DEPENDS "${map}")
  if(NOT AOTRUN_SANITIZE)
    target_link_options(${tgt} PRIVATE "LINKER:-z,defs")  # no unresolved symbols
  endif()
  if(P_DEPENDS)
    add_dependencies(${tgt} ${P_DEPENDS})
  endif()
  _aotrun_register_package_target(${tgt})

  if(P_PACKAGE_DIR OR P_WEIGHTS)
    set(dir_args "")
    if(P_PACKAGE_DIR)
      set(dir_args PACKAGE_DIR "${P_PACKAGE_DIR}")
    endif()
    if(P_DEVICE)
      list(APPEND dir_args DEVICE ${P_DEVICE})
    endif()
    aotrun_package_directory(${P_PACKAGE_NAME} LIBRARY_TARGET ${tgt}
      TARGET_ABI ${P_TARGET_ABI} WEIGHTS ${P_WEIGHTS} DEPENDS ${P_DEPENDS} ${dir_args})
  endif()
endfunction()
