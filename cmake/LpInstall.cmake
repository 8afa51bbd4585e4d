# LpInstall.cmake: what `cmake --install BUILD --prefix P` puts in P (docs/install.md):
#   include/layerprof.h                  the public C API
#   lib/liblayerprof.so.X.Y.Z            SONAME liblayerprof.so.<LP_SOVERSION>, exports lp_* only
#   bin/layerprof                        the CLI
#   lib/cmake/layerprof/                 find_package(layerprof) -> layerprof::layerprof
#   lib/pkgconfig/layerprof.pc           pkg-config --cflags --libs layerprof
# Included from the top CMakeLists.txt once liblayerprof and the CLI exist.

# Linking a program against liblayerprof makes the linker check libtorch's own dependencies. The
# wheel's libtorch finds them through $ORIGIN rpaths that the linker does not expand, so the
# -rpath-link options the shim needed travel with the library (empty for Debian's libtorch).
target_link_options(liblayerprof INTERFACE ${LP_TORCH_LINK_OPTIONS})

install(TARGETS liblayerprof EXPORT layerprofTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS layerprof RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/layerprof.h ${CMAKE_SOURCE_DIR}/include/layerprof.hpp
              ${CMAKE_SOURCE_DIR}/include/layerprof_pt2.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(LP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/layerprof)
install(EXPORT layerprofTargets NAMESPACE layerprof:: DESTINATION ${LP_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/layerprofConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/layerprofConfig.cmake
                              INSTALL_DESTINATION ${LP_CMAKE_DIR})
# Until 1.0 a minor release may change the ABI (the SONAME says so): only the same minor matches.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_lp_compat SameMinorVersion)
else()
  set(_lp_compat SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_BINARY_DIR}/layerprofConfigVersion.cmake
                                 COMPATIBILITY ${_lp_compat})
install(FILES ${CMAKE_BINARY_DIR}/layerprofConfig.cmake
              ${CMAKE_BINARY_DIR}/layerprofConfigVersion.cmake
        DESTINATION ${LP_CMAKE_DIR})

# pkg-config: the same -rpath-link options as the CMake target, in the order ld wants them.
string(REPLACE "LINKER:" "-Wl," LP_PC_LINK_OPTIONS "${LP_TORCH_LINK_OPTIONS}")
string(REPLACE ";" " " LP_PC_LINK_OPTIONS "${LP_PC_LINK_OPTIONS}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/layerprof.pc.in ${CMAKE_BINARY_DIR}/layerprof.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/layerprof.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
