# mk/bench.mk — the benchmarks, orchestrated by bench/run.
#
#   make bench         every benchmark that can run here (SQL, accuracy; with
#                      a GPU also the kernels, matadd and pipeline benches),
#                      CSVs and logs in bench/out/, plots in bench/plots/
#   make bench-smoke   the same at tiny sizes, plots in bench/out/plots/:
#                      under a minute, succeeds without a GPU (CI)
#   make bench-plot    only redraw the plots from bench/out/*.csv
#   make bench-cache   gpu_cache against sum(), the parallel scan and DuckDB
#                      (bench/cache_bench.py; CACHE_ROWS, default 1e7)
#   make bench-query   gpu_query's analytics benchmark: TPC-H Q1, Q6 and three
#                      dashboard queries against SQLite's own text and DuckDB
#                      (bench/query_bench.py; QUERY_ROWS, default 6e6;
#                      QUERY_THREADS, gpu_query's threads, default 0 = every
#                      core; QUERY_REPS, default 5; QUERY_ARGS, more options),
#                      CSV QUERY_CSV (bench/results/query_<host>_<date>.csv,
#                      appended to), its plot bench/plots/query.png
#   make bench-dask    gpuagg.dask over many files: a LocalCluster against one
#                      process scanning the files in turn and one over the
#                      merged database (bench/dask_bench.py; DASK_FILES,
#                      default 16, DASK_ROWS a file, default 1e6, DASK_WORKERS,
#                      default 2), CSV DASK_CSV (bench/results/dask_<host>_<date>.csv)
#   make bench-ssb     the Star Schema Benchmark's 13 queries (bench/ssb.py's
#                      tables, SSB_SF, default 1) through SQLite's own text,
#                      gpu_query and DuckDB (bench/ssb_bench.py; SSB_THREADS,
#                      default 0 = every core; SSB_REPS, default 5), CSV
#                      SSB_CSV (bench/results/ssb_<host>_<date>.csv) and each
#                      query's EXPLAIN QUERY PLAN beside it
#   make bench-duckdb-setup
#                      npm install of @duckdb/node-api into bench/duckdb/ (the
#                      optional DuckDB baseline; never a test dependency)
#
# bench/run builds the GPU binaries (make bench-kernels / bench-matadd) when
# a GPU is usable and they are missing; see its header for the environment.
.PHONY: bench bench-smoke bench-plot bench-cache bench-query bench-dask bench-duckdb-setup bench-ssb

BENCH_ENV = GPUAGG_LIB=$(abspath $(basename $(LIB))) PYTHON=$(PYTHON) SQLITE3=$(SQLITE3) \
            BENCH_BUILD=$(BUILD) $(if $(strip $(NVCC)),NVCC=$(NVCC))

bench: $(LIB)
	$(BENCH_ENV) bench/run

bench-smoke: $(LIB)
	$(BENCH_ENV) bench/run --smoke

bench-plot:
	$(PYTHON) bench/plot.py

CACHE_ROWS ?= 1e7
bench-cache: $(LIB)
	$(BENCH_ENV) $(PYTHON) bench/cache_bench.py --rows $(CACHE_ROWS) --csv bench/out/cache.csv

SSB_SF ?= 1
SSB_THREADS ?= 0
SSB_REPS ?= 5
SSB_CSV ?= bench/results/ssb_$(shell uname -n)_$(shell date +%F).csv
bench-ssb: $(LIB)
	$(BENCH_ENV) $(PYTHON) bench/ssb_bench.py --sf $(SSB_SF) --threads $(SSB_THREADS) \
	  --reps $(SSB_REPS) --csv $(SSB_CSV)

QUERY_ROWS ?= 6e6
QUERY_THREADS ?= 0
QUERY_REPS ?= 5
QUERY_ARGS ?=
QUERY_CSV ?= bench/results/query_$(shell uname -n)_$(shell date +%F).csv
bench-query: $(LIB)
	$(BENCH_ENV) $(PYTHON) bench/query_bench.py --rows $(QUERY_ROWS) --threads $(QUERY_THREADS) \
	  --reps $(QUERY_REPS) --csv $(QUERY_CSV) $(QUERY_ARGS)
	$(PYTHON) bench/plot_query.py $(QUERY_CSV)

DASK_FILES ?= 16
DASK_ROWS ?= 1e6
DASK_WORKERS ?= 2
DASK_REPS ?= 5
DASK_CSV ?= bench/results/dask_$(shell uname -n)_$(shell date +%F).csv
bench-dask: $(LIB)
	$(BENCH_ENV) $(PYTHON) bench/dask_bench.py --files $(DASK_FILES) --rows $(DASK_ROWS) \
	  --workers $(DASK_WORKERS) --reps $(DASK_REPS) --csv $(DASK_CSV)
	$(PYTHON) bench/plot_dask.py $(DASK_CSV)

bench-duckdb-setup:
	cd bench/duckdb && npm install --no-audit --no-fund
