# mk/layout.mk — the layering of the sources (issue 18).
#
#   make check-layout   builds the library's objects without LTO in
#                       $(BUILD)/layout (nm must read them) and checks the
#                       file dependency graph against mk/layers.txt: no
#                       cycle between files, nothing pointing up the layer
#                       order, no feature using a sibling's files
#                       (tests/layout/check_layout.py; .ci/run runs it).
#                       Prints the graph's layers when it passes.
#
# tests/layout/test_layout.py (suite `layout` of make test) plants cycles,
# upward and sibling edges in a scratch tree and checks that the same
# script fails on each.
.PHONY: check-layout
LAYOUT_BUILD := $(BUILD)/layout
# the objects of the other backend of kernels/gak.h are not built
LAYOUT_OPTIONAL := 'kernels/bench_*' $(if $(filter 1,$(CUDA)),'kernels/none.c','kernels/*.cu')

# nm reads the host side of the CUDA objects, the same for every GPU
# architecture: one is enough (CI: the five of GENCODE took 166 of lane A's
# seconds at 93c216d)
LAYOUT_GENCODE := -gencode=arch=compute_90,code=sm_90

check-layout:
	+@$(MAKE) --no-print-directory BUILD=$(LAYOUT_BUILD) LTO= \
	  GENCODE='$(LAYOUT_GENCODE)' \
	  LIB=$(LAYOUT_BUILD)/libgpuagg.so $(LAYOUT_BUILD)/libgpuagg.so >/dev/null
	@$(PYTHON) tests/layout/check_layout.py --layers mk/layers.txt \
	  --objdir $(LAYOUT_BUILD) --optional $(LAYOUT_OPTIONAL)
