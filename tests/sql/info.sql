-- gpuagg_config / gpuagg_info / gpuagg_version through the CLI (read-only and
-- error cases only: settings are changed by tests/test_config.py).
select 'cfg_unknown_name', gpuagg_config('nope'); -- error-prefix: gpuagg_config:
select 'cfg_unknown_name_set', gpuagg_config('nope', 1); -- error-prefix: gpuagg_config:
select 'cfg_bad_device', gpuagg_config('device', 'fastest'); -- error-prefix: gpuagg_config:
select 'cfg_bad_cpu_max_rows', gpuagg_config('cpu_max_rows', 'many'); -- error-prefix: gpuagg_config:
select 'cfg_device_text', gpuagg_config('device') in ('auto', 'cpu', 'gpu');
select 'cfg_get_is_set_value', '' || gpuagg_config('streams') = '' || gpuagg_config('streams', gpuagg_config('streams'));
select 'info_json_valid', json_valid(gpuagg_info());
select 'info_keys', json_type(gpuagg_info(), '$.version') = 'text' and json_type(gpuagg_info(), '$.cuda_compiled') in ('true', 'false') and json_type(gpuagg_info(), '$.gpu_usable') in ('true', 'false') and json_type(gpuagg_info(), '$.why') in ('text', 'null') and json_type(gpuagg_info(), '$.config') = 'object' and json_type(gpuagg_info(), '$.counters') = 'object' and json_type(gpuagg_info(), '$.last') in ('object', 'null');
select 'info_version_matches', json_extract(gpuagg_info(), '$.version') = gpuagg_version();
select 'version_format', gpuagg_version() glob '[0-9]*.[0-9]*.[0-9]*';
create temp table _q as select gpu_sum(value) s from generate_series(1, 5000);
select 'info_last_after_query', json_extract(gpuagg_info(), '$.last.path') in ('cpu', 'gpu', 'mixed') and json_extract(gpuagg_info(), '$.last.rows') = 5000, json_extract(gpuagg_info(), '$.last');
select 'info_last_cpu_when_no_gpu', json_extract(gpuagg_info(), '$.gpu_usable') or json_extract(gpuagg_info(), '$.last.path') = 'cpu';
