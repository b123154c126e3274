# build_identity.cmake: writes support/build_identity.h at build time (cmake -P), so the commit
# a binary reports is the checkout's HEAD when it was built, not when CMake last configured.
# configure_file leaves the header untouched when its text is unchanged, so a build with the
# same HEAD recompiles nothing.
# Inputs (-D): SOURCE_DIR (the checkout), INPUT (build_identity.h.in), OUTPUT, and the values
# the template names besides RS_GIT_COMMIT (PROJECT_VERSION, CMAKE_CXX_COMPILER_ID,
# CMAKE_CXX_COMPILER_VERSION, CMAKE_BUILD_TYPE, Eigen3_VERSION).
# RS_GIT_COMMIT: the 12-digit HEAD, with "-dirty" when tracked files differ from it; "unknown"
# outside a git checkout, or the value of RS_SOURCE_COMMIT when the caller builds from an
# exported tree (a release build from a tarball) and passes it.
if(DEFINED RS_SOURCE_COMMIT AND NOT RS_SOURCE_COMMIT STREQUAL "")
  set(RS_GIT_COMMIT "${RS_SOURCE_COMMIT}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE RS_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE rev_status)
  if(NOT rev_status EQUAL 0 OR RS_GIT_COMMIT STREQUAL "")
    set(RS_GIT_COMMIT "unknown")
  else()
    execute_process(COMMAND git diff-index --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR}
                    RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND RS_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
