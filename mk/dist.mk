# mk/dist.mk — what the packages (mk/wheel.mk, mk/npm.mk, mk/release.mk)
# share: the version, the legal files, and the words that describe a build.
#
# The version has one home, GPUAGG_VERSION in ext/config/config_fns.h (what
# gpuagg_version() returns); the packages read it from there.  What the .so
# needs from the system (glibc version, shared libraries) is measured on the
# built file by pkg/needs.sh, never typed.  pkg/stage.sh turns the templates
# pkg/<kind>/*.in into a package tree under $(BUILD)/.

GPUAGG_VERSION := $(shell sed -n 's/^\#define GPUAGG_VERSION "\([^"]*\)".*/\1/p' ext/config/config_fns.h)
DIST       ?= dist
DIST_ARCH  := $(shell uname -m)
NPM        ?= npm
DIST_LEGAL := LICENSE THIRD_PARTY_NOTICES.md
# (the kind follows CUDA, and $(LIB) follows CUDA through the config stamps)
DIST_KIND    = $(if $(filter 1,$(CUDA)),with CUDA kernels (compute capability 8.0 or newer) and the CPU path,CPU path only (built without CUDA))
DIST_LICENSE = $(if $(filter 1,$(CUDA)),MIT AND LicenseRef-NVIDIA-CUDA-EULA,MIT)
# KEY=VALUE arguments of pkg/stage.sh; NEEDS is the shell variable $$needs,
# set by the recipe from pkg/needs.sh
DIST_STAGE_VARS = VERSION='$(GPUAGG_VERSION)' KIND='$(DIST_KIND)' LICENSE='$(DIST_LICENSE)' \
                  ARCH='$(DIST_ARCH)' NEEDS="$$needs"

# The packages' file names (here, so that mk/test.mk and mk/hosts.mk, which
# sort before mk/wheel.mk and mk/npm.mk, can name them as prerequisites)
WHEEL_PLAT ?= linux_$(DIST_ARCH)
WHEEL      := $(DIST)/gpuagg-$(GPUAGG_VERSION)-py3-none-$(WHEEL_PLAT).whl
NPM_TGZ    := $(DIST)/gpuagg-$(GPUAGG_VERSION).tgz
