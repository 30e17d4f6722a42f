-- Partial overlap: a covers rows 0..9 x cols 0..14, b rows 5..14 x cols 10..24,
-- with holes; a cell present in one input only keeps its value.
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
insert into a select x.value, y.value, (random() % 100000) / 7.0 + 0.25 from generate_series(0, 9) x, generate_series(0, 14) y where (x.value + y.value) % 3 <> 0;
insert into b select x.value, y.value, (random() % 100000) / 11.0 + 0.5 from generate_series(5, 14) x, generate_series(10, 24) y where (x.value * y.value) % 4 <> 1;
create temp view ref as select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j order by i, j;
select 'overlap_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
select 'overlap_count', (select count(*) from gpu_matadd('a', 'b')) = (select count(*) from ref);
select 'overlap_swapped', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('b', 'a')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
-- A block far from the origin is dense in its own bounding box.
create table far_a(i integer, j integer, v real);
create table far_b(i integer, j integer, v real);
insert into far_a select 1000000000 + x.value, 2000000000 + y.value, x.value * 0.5 + 1 from generate_series(0, 49) x, generate_series(0, 49) y;
insert into far_b select 1000000000 + x.value, 2000000000 + y.value, y.value * 0.25 + 1 from generate_series(10, 59) x, generate_series(0, 49) y;
create temp view far_ref as select i, j, sum(v) as v from (select i, j, v from far_a union all select i, j, v from far_b) group by i, j order by i, j;
select 'far_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('far_a', 'far_b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from far_ref);
select 'far_is_dense', json_extract(gpu_matadd_info(), '$.path') like 'dense-%' and json_extract(gpu_matadd_info(), '$.cells') = 3000;
