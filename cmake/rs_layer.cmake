# rs_layer(NAME DEPS ...): one static library per src/ folder, built from every .cc in it
# (kernels/ and other subfolders included; bin/ holds executables' mains and is left out).
# Dependencies point down only (DESIGN.md; the table is src/layers.txt, test/layers checks it).
function(rs_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER srcs EXCLUDE REGEX "^${CMAKE_CURRENT_SOURCE_DIR}/bin/")
  if(srcs)
    add_library(rs_${name} STATIC ${srcs})
    target_include_directories(rs_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
    target_link_libraries(rs_${name} PUBLIC ${ARG_DEPS})
  else() # a layer with headers only (so far)
    add_library(rs_${name} INTERFACE)
    target_include_directories(rs_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
    target_link_libraries(rs_${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# rs_test(LAYER DEPS ...): one GoogleTest binary per test/ folder, from every *_test.cc in it.
function(rs_test name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  # Every .cc of the folder: the *_test.cc files and their helpers.
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(NOT srcs)
    return()
  endif()
  add_executable(rs_${name}_test ${srcs})
  target_link_libraries(rs_${name}_test PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(rs_${name}_test PRIVATE
    RS_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
    RS_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/test/data"
    RS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    RS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND rs_${name}_test WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endfunction()
