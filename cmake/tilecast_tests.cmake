# Test registration helpers. Two labels: `cpu` tests run anywhere (CI has no GPU); `gpu` tests
# exit with kTilecastSkipCode when no GPU is present, which CTest reports as skipped, not passed.
set(TILECAST_SKIP_CODE 77)

# Without GoogleTest (TILECAST_BUILD_TESTS=OFF) the helpers register nothing, so a folder that
# holds a library and its test (tests/common) still configures. (A project that includes this file
# without the option, as scripts/multi_gpu_barrier.sh's comm-only one, has tests.)
if(DEFINED TILECAST_BUILD_TESTS AND NOT TILECAST_BUILD_TESTS)
  function(tilecast_cpu_test)
  endfunction()
  function(tilecast_gpu_test)
  endfunction()
  return()
endif()
include(GoogleTest)

# tilecast_cpu_test(<name> SOURCES ... [LIBS ...]): one binary, each gtest case a CTest test.
function(tilecast_cpu_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE GTest::gtest_main ${T_LIBS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  # CUDA_CACHE_DISABLE: on a machine with a GPU driver, NVRTC may answer a program it compiled
  # before from the driver's compute cache without running ptxas (no resource report in the log);
  # the cpu tests read those reports, so they see the same NVRTC everywhere.
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES LABELS cpu TIMEOUT ${T_TIMEOUT} ENVIRONMENT CUDA_CACHE_DISABLE=1)
endfunction()

# tilecast_gpu_test(<name> SOURCES ... [LIBS ...]): one CTest test per binary; its main() comes
# from tests/common/gpu_test_main.cpp and returns TILECAST_SKIP_CODE without a GPU.
function(tilecast_gpu_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE tilecast_gpu_test_main GTest::gtest ${T_LIBS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 900)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE ${TILECAST_SKIP_CODE}
                                          TIMEOUT ${T_TIMEOUT})
endfunction()
