"""test_config.py — gpuagg_config(), gpuagg_info(), gpuagg_version()."""

import json
import subprocess
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, connect, q1, GPU, LIB  # noqa: E402

NAMES = ["cpu_max_rows", "gpu_start_rows", "device", "streams", "chunk_bytes", "devices"]


def main():
    rep = Reporter("config")
    con = connect()

    # ---- version
    ver = q1(con, "select gpuagg_version()")
    rep.check("version_format", isinstance(ver, str) and re.match(r"^\d+\.\d+\.\d+", ver or ""),
              "gpuagg_version() = %r" % (ver,))

    # ---- defaults
    rep.check("default_device_auto", q1(con, "select gpuagg_config('device')") == "auto",
              repr(q1(con, "select gpuagg_config('device')")))
    for name in ["cpu_max_rows", "streams", "chunk_bytes", "devices"]:
        v = q1(con, "select gpuagg_config(?)", (name,))
        rep.check("default_%s_numeric" % name, re.match(r"^\d+$", str(v)) is not None,
                  "gpuagg_config(%r) = %r" % (name, v))
    rep.check("default_chunk_bytes_positive", int(q1(con, "select gpuagg_config('chunk_bytes')")) > 0, "")
    rep.check("default_streams_positive", int(q1(con, "select gpuagg_config('streams')")) > 0, "")

    # ---- set / get round trips (set returns the value in effect)
    trips = [("cpu_max_rows", "1234"), ("cpu_max_rows", "0"), ("device", "cpu"), ("device", "gpu"),
             ("device", "auto"), ("streams", "2"), ("streams", "1"), ("chunk_bytes", "65536"),
             ("chunk_bytes", str(1 << 20)), ("devices", "1"), ("devices", "0")]
    for name, value in trips:
        got = q1(con, "select gpuagg_config(?, ?)", (name, value))
        now = q1(con, "select gpuagg_config(?)", (name,))
        rep.check("roundtrip_%s_%s" % (name, value), str(got) == value and str(now) == value,
                  "set returned %r, get returned %r" % (got, now))
    got = q1(con, "select gpuagg_config('cpu_max_rows', 777)")  # an INTEGER argument
    rep.check("set_integer_argument", str(got) == "777" and str(q1(con, "select gpuagg_config('cpu_max_rows')")) == "777",
              repr(got))
    got = q1(con, "select gpuagg_config('chunk_bytes', ?)", (1 << 22,))
    rep.check("set_chunk_bytes_integer", str(got) == str(1 << 22), repr(got))

    # ---- errors: unknown names and bad values name the valid ones
    for i, sql in enumerate(["select gpuagg_config('nope')", "select gpuagg_config('nope', 1)",
                             "select gpuagg_config('DEVICES_X', 'gpu')"]):
        e = q1(con, sql)
        ok = isinstance(e, tuple) and e[1].startswith("gpuagg_config:") and all(n in e[1] for n in NAMES)
        rep.check("error_unknown_name_%d" % i, ok, "%s -> %r" % (sql, e))
    before = q1(con, "select gpuagg_config('device')")
    e = q1(con, "select gpuagg_config('device', 'fast')")
    rep.check("error_bad_device", isinstance(e, tuple) and e[1].startswith("gpuagg_config:")
              and all(v in e[1] for v in ("auto", "cpu", "gpu")), repr(e))
    rep.check("bad_value_keeps_setting", q1(con, "select gpuagg_config('device')") == before,
              repr(q1(con, "select gpuagg_config('device')")))
    for name in ["cpu_max_rows", "streams", "chunk_bytes", "devices"]:
        before = q1(con, "select gpuagg_config(?)", (name,))
        e = q1(con, "select gpuagg_config(?, 'lots')", (name,))
        rep.check("error_bad_%s" % name, isinstance(e, tuple) and e[1].startswith("gpuagg_config:"),
                  repr(e))
        rep.check("error_bad_%s_keeps" % name, q1(con, "select gpuagg_config(?)", (name,)) == before,
                  repr(q1(con, "select gpuagg_config(?)", (name,))))
    e = q1(con, "select gpuagg_config('streams', -3)")
    rep.check("error_negative_streams", isinstance(e, tuple) and e[1].startswith("gpuagg_config:"), repr(e))

    # ---- gpuagg_info()
    info_txt = q1(con, "select gpuagg_info()")
    rep.check("info_is_text", isinstance(info_txt, str), repr(info_txt))
    rep.check("info_json_valid", q1(con, "select json_valid(gpuagg_info())") == 1, repr(info_txt)[:300])
    try:
        info = json.loads(info_txt)
    except Exception as e:  # noqa: BLE001
        info = {}
        rep.check("info_json_parse", False, str(e))
    for key in ["version", "cuda_compiled", "gpu_usable", "why", "config", "counters", "last"]:
        rep.check("info_has_%s" % key, isinstance(info, dict) and key in info, "keys: %s" % list(info)[:20])
    rep.check("info_version_matches", info.get("version") == ver, "%r vs %r" % (info.get("version"), ver))
    rep.check("info_cuda_compiled_bool", isinstance(info.get("cuda_compiled"), bool), repr(info.get("cuda_compiled")))
    rep.check("info_gpu_usable_bool", isinstance(info.get("gpu_usable"), bool), repr(info.get("gpu_usable")))
    rep.check("info_usable_needs_cuda", not (info.get("gpu_usable") and not info.get("cuda_compiled")), "")
    rep.check("info_counters_object", isinstance(info.get("counters"), dict), repr(info.get("counters")))
    q1(con, "select gpuagg_config('device', 'cpu')")
    q1(con, "select gpuagg_config('chunk_bytes', 65536)")
    cfg = json.loads(q1(con, "select gpuagg_info()")).get("config", {})
    rep.check("info_config_reflects_set", isinstance(cfg, dict) and cfg.get("device") == "cpu"
              and str(cfg.get("chunk_bytes")) == "65536", repr(cfg))
    rep.check("info_config_has_names", isinstance(cfg, dict) and all(n in cfg for n in NAMES), repr(cfg))

    # ---- last: path and rows of the last aggregate
    con.execute("create table t(x)")
    con.executemany("insert into t values (?)", [(i,) for i in range(1000)])
    s = q1(con, "select gpu_sum(x) from t")
    last = json.loads(q1(con, "select gpuagg_info()")).get("last", {})
    rep.check("last_path_cpu_device_cpu", isinstance(last, dict) and last.get("path") == "cpu", repr(last))
    rep.check("last_rows", isinstance(last, dict) and last.get("rows") == 1000, repr(last))
    rep.check("sum_under_device_cpu", s == 499500, repr(s))
    usable = json.loads(q1(con, "select gpuagg_info()")).get("gpu_usable")
    q1(con, "select gpuagg_config('device', 'auto')")
    q1(con, "select gpuagg_config('cpu_max_rows', 1000000)")
    s = q1(con, "select gpu_max(x) from t")
    last = json.loads(q1(con, "select gpuagg_info()")).get("last", {})
    rep.check("last_path_cpu_small_auto", last.get("path") == "cpu" and s == 999, "%r %r" % (last, s))
    if not usable:
        q1(con, "select gpuagg_config('device', 'gpu')")
        q1(con, "select gpuagg_config('cpu_max_rows', 0)")
        s = q1(con, "select gpu_sum(x) from t")
        last = json.loads(q1(con, "select gpuagg_info()")).get("last", {})
        rep.check("no_gpu_forced_falls_back_cpu", s == 499500 and last.get("path") == "cpu",
                  "%r %r" % (s, last))
        why = json.loads(q1(con, "select gpuagg_info()")).get("why")
        rep.check("no_gpu_why_text", isinstance(why, str) and why != "", repr(why))
        if GPU:
            rep.check("gpu_requested_but_unusable", False,
                      "GPUAGG_TEST_GPU=1 but gpu_usable is false: %r" % (why,))
    # ---- explicit entry point
    c2 = connect.__globals__["sqlite3"].connect(":memory:")
    c2.enable_load_extension(True)
    r = q1(c2, "select load_extension(?, 'sqlite3_gpuagg_init')", (LIB,))
    rep.check("entry_point_name", not isinstance(r, tuple) and q1(c2, "select gpuagg_version()") == ver, repr(r))
    # ---- the export list (mk/exports.map): the entry point and nothing else
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", LIB + ".so"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        rep.skip("exported_symbols", "nm: %s" % e)
    else:
        names = sorted(line.split()[-1] for line in out.splitlines() if line.strip())
        rep.check("exported_symbols", names == ["sqlite3_gpuagg_init"], repr(names))
    rep.finish()


if __name__ == "__main__":
    main()
