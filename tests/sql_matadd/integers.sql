-- Integer values (and untyped columns): the result is REAL, exact below 2^53.
create table a(i, j, v);
create table b(i integer, j integer, v integer);
insert into a select x.value, y.value, x.value * 1000003 - y.value * 77 from generate_series(0, 19) x, generate_series(0, 19) y;
insert into b select x.value, y.value, 1099511627776 + x.value + y.value from generate_series(5, 24) x, generate_series(0, 19) y;
create temp view ref as select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j order by i, j;
select 'int_matches_ref', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
select 'int_result_real', (select count(*) from gpu_matadd('a', 'b') where typeof(v) <> 'real') = 0;
select 'int_exact', (select v from gpu_matadd('a', 'b') where i = 6 and j = 3) = 6.0 * 1000003 - 3 * 77 + 1099511627776 + 9;
-- Indices stored as integral REALs are accepted.
create table r(i real, j real, v real);
insert into r values (1.0, 2.0, 0.5), (3.0, 0.0, 1.5);
select 'real_indices', (select group_concat(i || ',' || j || ',' || v || ',' || typeof(i), ';') from gpu_matadd('r', 'r')) = '1,2,1.0,integer;3,0,3.0,integer';
-- Mixed integer and real values.
create table m(i integer, j integer, v);
insert into m values (0, 0, 1), (0, 1, 2.5), (1, 0, -3);
select 'mixed_values', (select group_concat(i || ',' || j || ',' || v, ';') from gpu_matadd('m', 'm')) = '0,0,2.0;0,1,5.0;1,0,-6.0';
