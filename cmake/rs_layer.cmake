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

include(GoogleTest)

# rs_test(LAYER DEPS ... [WHOLE_SUITES suite...]): one GoogleTest binary per test/ folder, from
# every .cc in it, linked with test/common. Each test is its own ctest entry (named
# <Suite>.<Test>, labelled with the folder), so ctest -j runs them in parallel; a suite named
# in WHOLE_SUITES (its full gtest name, e.g. Fixtures/GoldenTest) is one entry, <layer>.<suite>,
# so that the server its SetUpTestSuite starts starts once.
function(rs_test name)
  cmake_parse_arguments(ARG "" "" "DEPS;WHOLE_SUITES" ${ARGN})
  # Every .cc of the folder: the *_test.cc files and their helpers.
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(NOT srcs)
    return()
  endif()
  set(target rs_${name}_test)
  add_executable(${target} ${srcs})
  target_link_libraries(${target} PRIVATE ${ARG_DEPS} rs_test_common GTest::gtest GTest::gtest_main)
  target_compile_definitions(${target} PRIVATE
    RS_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
    RS_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/test/data"
    RS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    RS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(exclude "")
  foreach(suite ${ARG_WHOLE_SUITES})
    string(REPLACE "/" "." entry "${suite}")
    add_test(NAME ${name}.${entry} COMMAND ${target} --gtest_filter=${suite}.*
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    # A whole suite starts a server and runs many tests: ctest -j starts it early (COST)
    # even before it has the timings of an earlier run.
    set_tests_properties(${name}.${entry} PROPERTIES LABELS ${name} COST 100)
    string(APPEND exclude ":${suite}.*")
  endforeach()
  set(filter "")
  if(exclude)
    string(SUBSTRING "${exclude}" 1 -1 exclude)
    set(filter TEST_FILTER "-${exclude}")
  endif()
  gtest_discover_tests(${target} ${filter}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DISCOVERY_TIMEOUT 120
    PROPERTIES LABELS ${name})
endfunction()

# rs_filecheck_tests(LAYER): one ctest entry, <layer>.<file>.mlir, per .mlir file of the
# test/ folder, run by LLVM's lit (Debian llvm-14-tools, scripts/setup.sh): lit executes the
# file's `// RUN:` lines (reactant-server run ... | FileCheck %s) with test/lit.cfg.py, which
# puts reactant-server and LLVM's FileCheck and `not` on the PATH.
function(rs_filecheck_tests name)
  file(GLOB cases CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.mlir)
  foreach(case ${cases})
    get_filename_component(case_name ${case} NAME)
    add_test(NAME ${name}.${case_name}
             COMMAND ${Python3_EXECUTABLE} ${RS_LIT} -v
                     --param reactant_server_dir=$<TARGET_FILE_DIR:reactant-server>
                     --param llvm_tools_dir=${RS_LLVM_TOOLS_DIR}
                     --param exec_root=${CMAKE_CURRENT_BINARY_DIR}/lit/${case_name} ${case}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(${name}.${case_name} PROPERTIES LABELS ${name} COST 10)
  endforeach()
endfunction()
