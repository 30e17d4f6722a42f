# mk/wheel.mk — the Python package.
#
#   make wheel    dist/gpuagg-<version>-py3-none-linux_<arch>.whl: the module
#                 gpuagg (loadable_path(), load(conn)) with $(LIB) inside,
#                 built offline with the system's pip, setuptools and wheel
#                 (Debian: python3-pip python3-setuptools python3-wheel)
#
# The tag is py3-none-linux_<arch> (pkg/python/setup.py says why); the
# description names the glibc that the .so needs.  The zip's dates are the
# last commit's (SOURCE_DATE_EPOCH), so the same .so gives the same wheel.  `make test` builds the
# wheel and tests/hosts/test_wheel.sh installs it into a fresh venv.
.PHONY: wheel

WHEEL_DIR  := $(BUILD)/wheel
WHEEL_IN   := $(shell find pkg/python -type f -not -name '*.pyc' 2>/dev/null)

wheel: $(WHEEL)

$(WHEEL): $(LIB) $(WHEEL_IN) $(DIST_LEGAL) pkg/stage.sh pkg/needs.sh
	@mkdir -p $(WHEEL_DIR) $(DIST)
	@needs=$$(pkg/needs.sh $(LIB)) && \
	  pkg/stage.sh pkg/python $(WHEEL_DIR)/src $(DIST_STAGE_VARS) PLAT='$(WHEEL_PLAT)'
	@cp $(LIB) $(WHEEL_DIR)/src/gpuagg/libgpuagg.so && cp $(DIST_LEGAL) $(WHEEL_DIR)/src/
	@rm -rf $(WHEEL_DIR)/out
	@SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 315532800)} \
	  GPUAGG_WHEEL_PLAT=$(WHEEL_PLAT) $(PYTHON) -m pip wheel --no-index --no-deps --no-build-isolation \
	  --disable-pip-version-check -w $(WHEEL_DIR)/out $(WHEEL_DIR)/src >$(WHEEL_DIR)/log 2>&1 && \
	  test -f $(WHEEL_DIR)/out/$(notdir $@) || { tail -n 15 $(WHEEL_DIR)/log; ls $(WHEEL_DIR)/out 2>/dev/null; \
	  echo "gpuagg: make wheel failed; it needs $(PYTHON) with pip, setuptools and wheel" \
	       "(Debian: apt-get install python3-pip python3-setuptools python3-wheel); log: $(WHEEL_DIR)/log"; exit 1; }
	@mv $(WHEEL_DIR)/out/$(notdir $@) $@
	@echo "gpuagg: built $@"
