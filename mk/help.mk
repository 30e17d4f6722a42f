# mk/help.mk — `make help`: the targets a person runs, one line each.
.PHONY: help
help:
	@printf '%s\n' \
	  'gpuagg make targets (README; docs/ for each function):' \
	  '' \
	  '  make               build ./libgpuagg.so (CUDA kernels when nvcc is found; CUDA=0: CPU only)' \
	  '  make demo          sql/demo.sql: sum vs gpu_sum on a 10M-row table' \
	  '  make examples      the examples of examples/ (Python, Node.js, CLI)' \
	  '  make install       install the .so (PREFIX, DESTDIR); make uninstall removes it' \
	  '  make wheel         dist/gpuagg-*.whl, the Python package' \
	  '  make npm           dist/gpuagg-*.tgz, the npm package' \
	  '  make release       both packages, tested, with sizes and sha256' \
	  '' \
	  '  make test          every suite (about 3-4 min on 2 cores); GPU-only checks SKIP' \
	  '  make test-gpu      the suites forced onto a GPU (a GPU machine)' \
	  '  make test-hosts    Python, sqlite-utils, pandas, the CLI, npm, install (about 2 min)' \
	  '  make test-build    the build itself in a temporary copy (1-3 min, a line per case)' \
	  '  make check-layout  no cycle between files, no dependency up the layers (mk/layers.txt)' \
	  '  make test-mutants  deliberate bugs the suites must catch (about 45 min)' \
	  '  make test-harden   ASan (the whole suite), TSan, OOM sweep, fuzz; apart: test-valgrind' \
	  '  make test-harden-ci  what CI runs of the sanitizers' \
	  '  make fuzz-partials  partial and state BLOBs mutated under ASan+UBSan (FUZZ_PARTIALS_SECONDS=60)' \
	  '' \
	  '  make bench         the benchmarks (bench/RESULTS.md); bench-smoke: a quick run' \
	  '  make bench-query   gpu_query: TPC-H Q1, Q6, dashboards vs SQLite, DuckDB (QUERY_ROWS=6e6, QUERY_THREADS=0)' \
	  '  make bench-ssb     the Star Schema Benchmark: 13 queries vs SQLite, DuckDB (SSB_SF=1, SSB_THREADS=0)' \
	  '  make bench-dask    gpuagg.dask: 16 files on a local Dask cluster vs one process (DASK_FILES, DASK_ROWS)' \
	  '  make format        clang-format the sources' \
	  '  make clean         remove build/, the .so and dist/' \
	  '' \
	  'Variables: CUDA=0, CC=, LTO= (off), CFLAGS=, NVCC=, CUDA_HOME=, GENCODE=, SQLITE_INCLUDE=, PYTHON='
