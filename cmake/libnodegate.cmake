# libnodegate: the public API (include/nodegate/nodegate.h, implemented in
# src/api/ over the flow layer) as one shared and one static library, with a
# pkg-config file, installed with the headers (component Development). The
# nodegate binary links the static one and nothing else of ours.
#
# The static library is every layer's objects in one archive (libnodegate.a),
# so `pkg-config --static --libs nodegate` is all a program needs; the shared
# one (libnodegate.so.0) exports only the nodegate_* names
# (src/api/libnodegate.map).
set(NODEGATE_API_SOURCES src/api/context.c src/api/decide.c src/api/gpu_check.c src/api/release.c)
set(NODEGATE_LAYERS nodegate_flow nodegate_land nodegate_collect nodegate_store nodegate_parse
    nodegate_judge nodegate_core)

add_library(nodegate_api STATIC ${NODEGATE_API_SOURCES})
target_include_directories(nodegate_api PUBLIC ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(nodegate_api PUBLIC nodegate_flow)

# libnodegate.a: an archive of the archives (ar's MRI script).
set(libnodegate_a ${CMAKE_BINARY_DIR}/libnodegate.a)
set(mri "CREATE ${libnodegate_a}\n")
set(mri_deps nodegate_api)
foreach(l nodegate_api ${NODEGATE_LAYERS})
  string(APPEND mri "ADDLIB $<TARGET_FILE:${l}>\n")
  list(APPEND mri_deps ${l})
endforeach()
string(APPEND mri "SAVE\nEND\n")
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/libnodegate.mri CONTENT "${mri}")
add_custom_command(OUTPUT ${libnodegate_a}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${libnodegate_a}
  COMMAND ${CMAKE_AR} -M < ${CMAKE_BINARY_DIR}/libnodegate.mri
  DEPENDS ${mri_deps} ${CMAKE_BINARY_DIR}/libnodegate.mri
  COMMENT "Archiving libnodegate.a" VERBATIM)
add_custom_target(nodegate_static_archive DEPENDS ${libnodegate_a})
add_library(libnodegate_static STATIC IMPORTED GLOBAL)
set_target_properties(libnodegate_static PROPERTIES IMPORTED_LOCATION ${libnodegate_a})
add_dependencies(libnodegate_static nodegate_static_archive)
# What the layers link beyond themselves (libpq and SQLite are loaded at run
# time).
target_link_libraries(libnodegate_static INTERFACE PkgConfig::CJSON PkgConfig::NETTLE
  PkgConfig::URING Threads::Threads ${CMAKE_DL_LIBS} m)
target_include_directories(libnodegate_static INTERFACE ${CMAKE_SOURCE_DIR}/include)

add_library(nodegate_shared SHARED ${NODEGATE_API_SOURCES})
target_include_directories(nodegate_shared PUBLIC ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(nodegate_shared PRIVATE nodegate_flow)
target_link_options(nodegate_shared PRIVATE
  -Wl,--version-script=${CMAKE_SOURCE_DIR}/src/api/libnodegate.map)
# Everything it needs is linked in; an instrumented build leaves the
# sanitizers' runtime to the program that loads it.
if(NOT NODEGATE_FUZZ AND NOT NODEGATE_SANITIZE)
  target_link_options(nodegate_shared PRIVATE -Wl,--no-undefined)
endif()
set_target_properties(nodegate_shared PROPERTIES
  OUTPUT_NAME nodegate VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/src/api/libnodegate.map
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# nodegate.pc names its prefix relative to itself ("../.." for lib/pkgconfig).
string(REGEX MATCHALL "[^/]+" pc_depth "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(NODEGATE_PC_UP "")
foreach(part ${pc_depth})
  string(APPEND NODEGATE_PC_UP "/..")
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/src/api/nodegate.pc.in ${CMAKE_BINARY_DIR}/nodegate.pc @ONLY)
install(TARGETS nodegate_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        NAMELINK_COMPONENT Development COMPONENT Development)
install(FILES ${libnodegate_a} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(DIRECTORY include/nodegate DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development
        FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_BINARY_DIR}/nodegate.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT Development)
