# cmake -DLIB=<shared library> -DREADELF=<readelf> -P check_no_driver_link.cmake
# Fails if LIB has a DT_NEEDED entry for the CUDA driver or the shared CUDA
# runtime: libaotrun must load on machines without a GPU or driver.
execute_process(COMMAND "${READELF}" -d "${LIB}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${LIB} failed (${rc})")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${out}")
message(STATUS "${LIB}:")
foreach(n IN LISTS needed)
  message(STATUS "  ${n}")
endforeach()
if(out MATCHES "libcuda\\.so" OR out MATCHES "libcudart\\.so")
  message(FATAL_ERROR "${LIB} needs libcuda.so or libcudart.so; link CUDA::cudart_static and never the driver")
endif()
if(NOT needed)
  message(FATAL_ERROR "no NEEDED entries found in ${LIB}; is it a shared library?")
endif()
