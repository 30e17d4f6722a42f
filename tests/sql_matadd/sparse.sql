-- Huge sparse shape: ~300 entries over 10^7 x 10^7.  The dense shape would be
-- 8e14 bytes; the sparse path merges sorted coordinates instead.
create table a(i integer, j integer, v real, primary key (i, j));
create table b(i integer, j integer, v real, primary key (i, j));
insert or ignore into a select abs(random()) % 10000000, abs(random()) % 10000000, (random() % 100000) / 3.0 + 0.125 from generate_series(1, 200);
insert or ignore into b select i, j, (random() % 100000) / 7.0 + 0.375 from a where i % 2 = 0;
insert or ignore into b select abs(random()) % 10000000, abs(random()) % 10000000, (random() % 100000) / 9.0 + 0.5 from generate_series(1, 100);
insert or replace into a values (0, 0, 1.5), (9999999, 9999999, 2.5);
insert or replace into b values (0, 0, 3.0), (9999999, 0, 4.0);
create temp view ref as select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j order by i, j;
select 'sparse_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
select 'sparse_path', json_extract(gpu_matadd_info(), '$.path') = 'sparse' and json_extract(gpu_matadd_info(), '$.cells') = 0;
select 'sparse_count', (select count(*) from gpu_matadd('a', 'b')) = (select count(*) from ref);
select 'sparse_corner', (select v from gpu_matadd('a', 'b') where i = 0 and j = 0) = 4.5 and (select v from gpu_matadd('a', 'b') where i = 9999999 and j = 9999999) = 2.5;
-- Extreme indices: near 2^62 (the box product overflows 64 bits).
create table e_a(i integer, j integer, v real);
create table e_b(i integer, j integer, v real);
insert into e_a values (0, 0, 1), (4611686018427387904, 4611686018427387904, 2), (9223372036854775807, 1, 3);
insert into e_b values (4611686018427387904, 4611686018427387904, 10), (1, 9223372036854775807, 5);
select 'extreme_rows', (select group_concat(i || ',' || j || ',' || v, ';') from gpu_matadd('e_a', 'e_b')) = '0,0,1.0;1,9223372036854775807,5.0;4611686018427387904,4611686018427387904,12.0;9223372036854775807,1,3.0';
select 'extreme_sparse', json_extract(gpu_matadd_info(), '$.path') = 'sparse';
