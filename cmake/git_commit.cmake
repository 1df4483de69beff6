# Writes OUTPUT, a header that defines TILECAST_BENCH_GIT_COMMIT as `git describe` of SOURCE_DIR
# ("-dirty" where the tree differs from it; "unknown" without git), and rewrites it only when that
# changes, so that an unchanged tree recompiles nothing. Run at every build (tools/bench), not at
# configure time: a build folder kept across commits (the GPU machine's) printed the commit it was
# configured at.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -P git_commit.cmake
execute_process(COMMAND git describe --always --dirty --abbrev=12
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE result)
if(NOT result EQUAL 0 OR NOT commit)
  set(commit unknown)
endif()
set(text "#define TILECAST_BENCH_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
