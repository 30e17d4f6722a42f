-- Run only with GPUAGG_TEST_GPU=1, under GPUAGG_FAULT=<stage>:<n> in forced
-- mode: the injected CUDA failure must fall back to the CPU, same answer.
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
insert into a select x.value, y.value, (random() % 1000000 + 1000003) / 997.0 from generate_series(0, 199) x, generate_series(0, 299) y;
insert into b select x.value, y.value, (random() % 1000000 + 1000003) / 983.0 from generate_series(0, 199) x, generate_series(0, 299) y where (x.value + y.value) % 5 <> 0;
create temp view ref as select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j order by i, j;
select 'fault_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
select 'fault_fell_back', json_extract(gpu_matadd_info(), '$.fallback') = 1 and json_extract(gpu_matadd_info(), '$.path') = 'dense-cpu';
select 'after_fault_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
