# `cmake --install` of the C++ library: the static libraries of the GEMM API and the layers below
# it (plan, jit, driver), the public headers with the device headers, tilecast-warm and
# tilecast-plan, and a CMake package, so that a consumer writes
#
#   find_package(tilecast REQUIRED)
#   target_link_libraries(app PRIVATE tilecast::tilecast)
#
# The installed library needs no source tree: the JIT compiles from the device headers embedded in
# libtilecast_jit.a and from CCCL in the CUDA toolkit found at run time (docs/jit.md). comm (the
# cross-GPU barrier, which needs NCCL) is not part of the package yet.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TILECAST_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tilecast")
set(_tc_exported tilecast tilecast_plan tilecast_jit tilecast_driver tilecast_device)

# The folders' CMakeLists name source-tree folders in their PUBLIC include paths (src/ for the
# internal headers, include/) and the toolkit's CCCL folder of this machine. An exported target
# may carry neither: keep them for the build tree only, and give the installed targets the
# installed include/ (CCCL is looked up again in the consumer's toolkit, by tilecastConfig.cmake).
function(_tilecast_build_only target property)
  get_target_property(values ${target} ${property})
  if(NOT values)
    return()
  endif()
  set(out "")
  foreach(v IN LISTS values)
    set(local OFF)
    foreach(dir IN ITEMS "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}" "${TILECAST_CCCL_INCLUDE_DIR}")
      string(FIND "${v}" "${dir}" at)
      if(NOT at EQUAL -1)
        set(local ON)
      endif()
    endforeach()
    if(local AND NOT v MATCHES "^\\$<")
      list(APPEND out "$<BUILD_INTERFACE:${v}>")
    else()
      list(APPEND out "${v}")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY ${property} "${out}")
endfunction()

foreach(t IN LISTS _tc_exported)
  _tilecast_build_only(${t} INTERFACE_INCLUDE_DIRECTORIES)
  _tilecast_build_only(${t} INTERFACE_COMPILE_DEFINITIONS)
endforeach()
set_property(TARGET tilecast_device APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
             "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
# Exported as tilecast::tilecast (the API), tilecast::plan, tilecast::jit, tilecast::driver and
# tilecast::device (the header-only device code).
set_target_properties(tilecast_plan PROPERTIES EXPORT_NAME plan)
set_target_properties(tilecast_jit PROPERTIES EXPORT_NAME jit)
set_target_properties(tilecast_driver PROPERTIES EXPORT_NAME driver)
set_target_properties(tilecast_device PROPERTIES EXPORT_NAME device)

install(TARGETS ${_tc_exported} EXPORT tilecastTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cpp)
if(TILECAST_BUILD_TOOLS)
  install(TARGETS tilecast-warm tilecast-plan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cpp)
endif()

# Public headers: the API (tilecast/*.hpp), planning (tilecast/plan) and the device code, which
# the public headers include (types.hpp includes device/dtype.cuh; plan/ the scheduler). The host
# side of comm (tilecast/comm) needs NCCL and its library, and stays out with it.
file(GLOB _tc_api_headers "${PROJECT_SOURCE_DIR}/include/tilecast/*.hpp")
install(FILES ${_tc_api_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilecast COMPONENT cpp)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tilecast/device" "${PROJECT_SOURCE_DIR}/include/tilecast/plan"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilecast COMPONENT cpp)

install(EXPORT tilecastTargets NAMESPACE tilecast:: DESTINATION ${TILECAST_INSTALL_CMAKEDIR} COMPONENT cpp)
configure_package_config_file(cmake/tilecastConfig.cmake.in "${PROJECT_BINARY_DIR}/tilecastConfig.cmake"
                              INSTALL_DESTINATION ${TILECAST_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tilecastConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tilecastConfig.cmake" "${PROJECT_BINARY_DIR}/tilecastConfigVersion.cmake"
        DESTINATION ${TILECAST_INSTALL_CMAKEDIR} COMPONENT cpp)
