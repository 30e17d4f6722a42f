# mk/npm.mk — the npm package.
#
#   make npm    dist/gpuagg-<version>.tgz (npm pack, offline): package.json,
#               index.js (getLoadablePath(), load(db): the sqlite-vec
#               convention, for better-sqlite3's db.loadExtension), index.d.ts,
#               libgpuagg.so, README.md, LICENSE, THIRD_PARTY_NOTICES.md
#
# `make test-hosts` builds it and tests/hosts/test_npm.sh installs it next to
# better-sqlite3 12 in a temporary folder (mk/hosts.mk).
.PHONY: npm

NPM_DIR    := $(BUILD)/npm
NPM_IN     := $(shell find pkg/npm -type f 2>/dev/null)
# Node's names for the machine (package.json "cpu")
NPM_CPU_x86_64  := x64
NPM_CPU_aarch64 := arm64
NPM_CPU    := $(or $(NPM_CPU_$(DIST_ARCH)),$(DIST_ARCH))

npm: $(NPM_TGZ)

$(NPM_TGZ): $(LIB) $(NPM_IN) $(DIST_LEGAL) pkg/stage.sh pkg/needs.sh
	@command -v $(NPM) >/dev/null 2>&1 || { echo "gpuagg: make npm needs npm (Node.js)"; exit 1; }
	@mkdir -p $(NPM_DIR) $(DIST)
	@needs=$$(pkg/needs.sh $(LIB)) && \
	  pkg/stage.sh pkg/npm $(NPM_DIR)/pkg $(DIST_STAGE_VARS) NODE_CPU='$(NPM_CPU)'
	@cp $(LIB) $(NPM_DIR)/pkg/libgpuagg.so && cp $(DIST_LEGAL) $(NPM_DIR)/pkg/
	@rm -f $@
	@cd $(NPM_DIR)/pkg && $(NPM) pack --offline --pack-destination $(abspath $(DIST)) >../log 2>&1 && \
	  test -f $(abspath $@) || { tail -n 15 $(NPM_DIR)/log; echo "gpuagg: make npm failed; log: $(NPM_DIR)/log"; exit 1; }
	@echo "gpuagg: built $@"
