# What `cmake --install` puts under the prefix, so that an engine links libdtb with
# `pkg-config --cflags --libs dtb` or `find_package(dtb)` + `target_link_libraries(app dtb::dtb)`:
#   lib/libdtb.so          the probe library (dtb + dtbformat + dtbcore), exporting only what
#                          probe/dtb.h declares
#   lib/libdtb.a           the same code as one static archive, for engines that ship one
#                          binary: `pkg-config --static --libs dtb` (with -static, or the archive
#                          named) or target dtb::dtb_static, which bring -lzstd and threads
#   include/dtb.h          its public header, and include/dtb_status.h, which dtb.h includes
#   lib/pkgconfig/dtb.pc   (Requires.private: libzstd)
#   lib/cmake/dtb/         dtbConfig.cmake, dtbConfigVersion.cmake, dtbTargets*.cmake
#   bin/dtbgen, bin/dtbprobe
#   lib/python3.X/dist-packages/dtb/  the Python package (DTB_PYTHON_DIR; see the end of this file)
# Included from the top-level CMakeLists.txt after every folder, so all targets exist.
#
# Why a shared library first: the in-tree libraries are static archives (dtb needs dtbcore, zstd
# and threads), and plain `pkg-config --libs` leaves Requires.private and Libs.private out.
# libdtb.so carries its dependencies itself: one -ldtb. It is linked from the static archives
# (whole), so nothing is compiled twice; their code is already PIC. libdtb.a (issue #38) is the
# same three archives' objects in one archive; its link line adds zstd and threads
# (Requires.private / Libs.private in dtb.pc, INTERFACE_LINK_LIBRARIES of dtb::dtb_static).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_dtb_header "${CMAKE_CURRENT_LIST_DIR}/dtb.h")
set(_dtb_status_header "${PROJECT_SOURCE_DIR}/core/dtb_status.h")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_dtb_header}")

# The exported symbols are the functions dtb.h declares (a declaration starts in column 0 and
# names a dtb_ function; static inline helpers are not symbols), read from the header so the
# list cannot fall behind it. Everything else (core's dtb_fen_read, ...) stays internal.
file(STRINGS "${_dtb_header}" _dtb_decls REGEX "^[A-Za-z].*[ *]dtb_[a-z0-9_]+\\(")
set(_dtb_exports "")
foreach(_decl IN LISTS _dtb_decls)
  if(NOT _decl MATCHES "^(static|typedef)" AND _decl MATCHES "[ *](dtb_[a-z0-9_]+)\\(")
    string(APPEND _dtb_exports "    ${CMAKE_MATCH_1};\n")
  endif()
endforeach()
if(_dtb_exports STREQUAL "")
  message(FATAL_ERROR "no function declarations found in ${_dtb_header}")
endif()
set(_dtb_map "${CMAKE_BINARY_DIR}/probe/libdtb.map")
file(GENERATE OUTPUT "${_dtb_map}" CONTENT "{\n  global:\n${_dtb_exports}  local: *;\n};\n")

# The shared library's soname follows DTB_API_VERSION (bumped on incompatible header changes).
file(STRINGS "${_dtb_header}" _dtb_api REGEX "^#define DTB_API_VERSION [0-9]+")
string(REGEX REPLACE ".* " "" _dtb_api "${_dtb_api}")

# CMake wants a source for every library; the code comes from the archives below.
file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/probe/libdtb_shared.c"
     CONTENT "/* libdtb.so is the dtb, dtbformat and dtbcore archives. */\ntypedef int dtb_shared_unit;\n")
add_library(dtbshared SHARED "${CMAKE_BINARY_DIR}/probe/libdtb_shared.c")
# Linked whole, then the linker drops every section that no exported function reaches
# (--gc-sections), so the library holds what dtb.h declares and what that needs, nothing more.
target_link_libraries(dtbshared PRIVATE
  -Wl,--whole-archive dtb dtbformat dtbcore -Wl,--no-whole-archive
  "-Wl,--version-script=${_dtb_map}" -Wl,--gc-sections
  # Every symbol resolved at link time (clang's sanitizer runtimes live in the executable).
  $<$<NOT:$<BOOL:${DTB_SANITIZE}>>:-Wl,--no-undefined>)
# Users see dtb.h alone, in the build tree too (a copy kept apart from probe/'s private headers).
configure_file("${_dtb_header}" "${CMAKE_BINARY_DIR}/include/dtb.h" COPYONLY)
configure_file("${_dtb_status_header}" "${CMAKE_BINARY_DIR}/include/dtb_status.h" COPYONLY)
target_include_directories(dtbshared INTERFACE
  $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(dtbshared PROPERTIES
  OUTPUT_NAME dtb
  EXPORT_NAME dtb
  SOVERSION ${_dtb_api}
  LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/probe"
  LINK_DEPENDS "${_dtb_map}")
# The installed name, also for projects that add this tree with add_subdirectory.
add_library(dtb::dtb ALIAS dtbshared)

# libdtb.a: the objects of the three archives in one (CMake reads them from the archives'
# targets), with zstd and threads as its link interface.
find_package(Threads REQUIRED)
add_library(dtbstatic STATIC $<TARGET_OBJECTS:dtb> $<TARGET_OBJECTS:dtbformat>
                             $<TARGET_OBJECTS:dtbcore>)
target_link_libraries(dtbstatic INTERFACE zstd Threads::Threads)
target_include_directories(dtbstatic INTERFACE
  $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(dtbstatic PROPERTIES
  OUTPUT_NAME dtb
  EXPORT_NAME dtb_static
  ARCHIVE_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/probe/static") # probe/libdtb.a is target dtb
add_library(dtb::dtb_static ALIAS dtbstatic)

install(TARGETS dtbshared dtbstatic EXPORT dtbTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES "${_dtb_header}" "${_dtb_status_header}" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dtbgen dtbprobe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# CMake package: relocatable (paths relative to the config file).
set(_dtb_cmakedir "${CMAKE_INSTALL_LIBDIR}/cmake/dtb")
install(EXPORT dtbTargets NAMESPACE dtb:: DESTINATION "${_dtb_cmakedir}")
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/dtbConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/probe/dtbConfig.cmake" INSTALL_DESTINATION "${_dtb_cmakedir}")
write_basic_package_version_file("${CMAKE_BINARY_DIR}/probe/dtbConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${CMAKE_BINARY_DIR}/probe/dtbConfig.cmake"
  "${CMAKE_BINARY_DIR}/probe/dtbConfigVersion.cmake" DESTINATION "${_dtb_cmakedir}")

# pkg-config file: written at install time, so that `cmake --install --prefix P` gets P in it.
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(_dtb_pc_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(_dtb_pc_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
install(CODE "
  set(DTB_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(DTB_PC_LIBDIR [=[${_dtb_pc_LIBDIR}]=])
  set(DTB_PC_INCLUDEDIR [=[${_dtb_pc_INCLUDEDIR}]=])
  set(DTB_PC_VERSION \"${PROJECT_VERSION}\")
  configure_file(\"${CMAKE_CURRENT_LIST_DIR}/dtb.pc.in\" \"${CMAKE_BINARY_DIR}/probe/dtb.pc\" @ONLY)
")
install(FILES "${CMAKE_BINARY_DIR}/probe/dtb.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# The Python package dtb (probe/python/dtb, probe/python/README.md) under the prefix, in
# DTB_PYTHON_DIR: by default lib/python3.X/dist-packages (X: the minor version of the system's
# python3 at configure time), a directory Debian's python3 searches for the prefixes /usr and
# /usr/local. Its _install.py, written at install time like dtb.pc, tells it where libdtb.so is.
find_program(DTB_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(DTB_PYTHON3 python3)
set(_dtb_pydir "lib/python3/dist-packages")
if(DTB_PYTHON3)
  execute_process(COMMAND "${DTB_PYTHON3}" -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE _dtb_pyver OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_dtb_pyver MATCHES "^3\\.[0-9]+$")
    set(_dtb_pydir "lib/python${_dtb_pyver}/dist-packages")
  endif()
endif()
set(DTB_PYTHON_DIR "${_dtb_pydir}" CACHE STRING
    "where cmake --install puts the Python package dtb (relative to the prefix, or absolute)")
install(DIRECTORY "${CMAKE_CURRENT_LIST_DIR}/python/dtb" DESTINATION "${DTB_PYTHON_DIR}"
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(CODE "
  set(_pkg [=[${DTB_PYTHON_DIR}]=])
  set(_lib [=[${CMAKE_INSTALL_LIBDIR}]=])
  if(NOT IS_ABSOLUTE \"\${_pkg}\")
    set(_pkg \"\${CMAKE_INSTALL_PREFIX}/\${_pkg}\")
  endif()
  if(NOT IS_ABSOLUTE \"\${_lib}\")
    set(_lib \"\${CMAKE_INSTALL_PREFIX}/\${_lib}\")
  endif()
  file(RELATIVE_PATH DTB_PY_LIBDIR_RELATIVE \"\${_pkg}/dtb\" \"\${_lib}\")
  set(DTB_PY_LIBDIR \"\${_lib}\")
  configure_file(\"${CMAKE_CURRENT_LIST_DIR}/python/_install.py.in\"
                 \"${CMAKE_BINARY_DIR}/probe/python/_install.py\" @ONLY)
")
install(FILES "${CMAKE_BINARY_DIR}/probe/python/_install.py" DESTINATION "${DTB_PYTHON_DIR}/dtb")
