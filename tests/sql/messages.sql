-- How error messages show what they were given: SQL NULL as a bare NULL,
-- text in quotes (so NULL and 'NULL' read differently).
select 'cfg_null_streams', gpuagg_config('streams', NULL); -- error: gpuagg_config: bad value for streams: NULL (valid: 1 to 16)
select 'cfg_text_null_streams', gpuagg_config('streams', 'NULL'); -- error: gpuagg_config: bad value for streams: 'NULL' (valid: 1 to 16)
select 'cfg_null_cpu_max_rows', gpuagg_config('cpu_max_rows', NULL); -- error: gpuagg_config: bad value for cpu_max_rows: NULL (valid: an integer >= 0)
select 'cfg_text_cpu_max_rows', gpuagg_config('cpu_max_rows', 'x1'); -- error: gpuagg_config: bad value for cpu_max_rows: 'x1' (valid: an integer >= 0)
select 'cfg_null_device', gpuagg_config('device', NULL); -- error: gpuagg_config: bad value for device: NULL (valid: auto, cpu, gpu)
select 'cfg_null_chunk_bytes', gpuagg_config('chunk_bytes', NULL); -- error-prefix: gpuagg_config: bad value for chunk_bytes: NULL (valid:
select 'cfg_null_keeps_setting', gpuagg_config('streams') between 1 and 16;
