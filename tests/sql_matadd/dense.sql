-- Dense matrices: every cell of both inputs present, random non-zero values.
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
insert into a select x.value, y.value, (random() % 1000000 + 1000003) / 997.0 from generate_series(0, 29) x, generate_series(0, 39) y;
insert into b select x.value, y.value, -(random() % 1000000 + 1000003) / 991.0 from generate_series(0, 29) x, generate_series(0, 39) y;
create temp view ref as select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j order by i, j;
select 'dense_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
select 'dense_count', (select count(*) from gpu_matadd('a', 'b')) = 1200;
select 'dense_path', json_extract(gpu_matadd_info(), '$.path') like 'dense-%' and json_extract(gpu_matadd_info(), '$.cells') = 1200;
select 'dense_types', (select count(*) from gpu_matadd('a', 'b') where typeof(i) = 'integer' and typeof(j) = 'integer' and typeof(v) = 'real') = 1200;
select 'dense_hidden_args', (select a || '+' || b from gpu_matadd('a', 'b') limit 1) = 'a+b';
-- Bigger: 300 x 500, many bands in forced mode (chunk_bytes 65536).
create table big_a(i integer, j integer, v real);
create table big_b(i integer, j integer, v real);
insert into big_a select x.value, y.value, (random() % 1000000 + 1000003) / 997.0 from generate_series(0, 299) x, generate_series(0, 499) y;
insert into big_b select x.value, y.value, (random() % 1000000 + 1000003) / 983.0 from generate_series(0, 299) x, generate_series(0, 499) y;
create temp view big_ref as select i, j, sum(v) as v from (select i, j, v from big_a union all select i, j, v from big_b) group by i, j order by i, j;
select 'big_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('big_a', 'big_b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from big_ref);
select 'big_info', json_extract(gpu_matadd_info(), '$.rows_read') = 300000 and json_extract(gpu_matadd_info(), '$.path') like 'dense-%';
select 'big_gpu_bands', json_extract(gpu_matadd_info(), '$.path') <> 'dense-gpu' or json_extract(gpu_matadd_info(), '$.bands') > 1;
-- a + a: the same table twice.
select 'self_add', (select count(*) from gpu_matadd('a', 'a') g join a on a.i = g.i and a.j = g.j where g.v = a.v + a.v) = 1200;
