# mk/release.mk — make release: the files of a release, tested and listed.
#
#   make release   builds $(LIB), the wheel (make wheel) and the npm tarball
#                  (make npm), runs their tests (tests/hosts/test_wheel.sh,
#                  tests/hosts/test_npm.sh: install, load, exact sums; the npm
#                  one needs the better-sqlite3 that make test-hosts
#                  installs, else it SKIPs), then prints each file with its
#                  size and sha256 and writes $(DIST)/SHA256SUMS.
#
# It does not run `make test`: run that (and `make test-gpu` on a GPU
# machine) on the commit you release.  Which kind of .so is inside (CUDA or
# CPU-only) is the first line of the summary: release from a machine with nvcc.
.PHONY: release

release: $(LIB) $(WHEEL) $(NPM_TGZ)
	@$(HOSTS_ENV) GPUAGG_WHEEL=$(CURDIR)/$(WHEEL) GPUAGG_NPM_TGZ=$(CURDIR)/$(NPM_TGZ) sh -c 'rc=0; \
	  tests/hosts/test_wheel.sh || rc=1; tests/hosts/test_npm.sh || rc=1; exit $$rc' || \
	  { echo "gpuagg: make release: a package test failed (above)"; exit 1; }
	@needs=$$(pkg/needs.sh $(LIB)) && pkg/release.sh $(DIST) \
	  "gpuagg $(GPUAGG_VERSION) release: $(DIST_KIND); Linux $(DIST_ARCH), needs $$needs" \
	  $(LIB) $(WHEEL) $(NPM_TGZ)
