# mk/buildtest.mk — tests of the build itself (tests/build/test_build.sh).
#
#   make test-build   in a temporary copy of the working tree: config stamps
#                     (CFLAGS=, LTO=, CC= rebuild; a second make does
#                     nothing), a gcc with a broken lto-wrapper, CC=clang, the
#                     CPU-only reasons; with nvcc also the CUDA / CUDA=0 round
#                     trip (BUILD_TEST_CUDA=0 skips it).  About 30 s CPU-only,
#                     1-3 minutes more with nvcc; CI runs it with
#                     BUILD_TEST_CUDA=0 (.ci/run).
.PHONY: test-build

test-build:
	@SQLITE3=$(SQLITE3) tests/build/test_build.sh
