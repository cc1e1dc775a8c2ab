# aotrun_discovered_tests_property(<TEST_LIST var> <property> <value>...)
#
# Sets a property, list values included, on the tests gtest_discover_tests
# finds. Its own PROPERTIES option cannot carry a list: the value "a;b"
# reaches set_tests_properties as two words, so LABELS "stress;threading"
# silently became LABELS stress plus a property named "threading" (and the
# stress suite never ran in the ThreadSanitizer stage). The tests exist only
# at ctest time, so this writes a small script that ctest includes after the
# discovered tests (TEST_INCLUDE_FILES keeps the order of registration: call
# it after gtest_discover_tests(... TEST_LIST <var>)).
function(aotrun_discovered_tests_property list_var property)
  string(MAKE_C_IDENTIFIER "${list_var}_${property}" _id)
  set(_file ${CMAKE_CURRENT_BINARY_DIR}/${_id}.cmake)
  file(WRITE ${_file}
    "if(DEFINED ${list_var} AND NOT \"\${${list_var}}\" STREQUAL \"\")\n"
    "  set_tests_properties(\${${list_var}} PROPERTIES ${property} [==[${ARGN}]==])\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_file})
endfunction()
