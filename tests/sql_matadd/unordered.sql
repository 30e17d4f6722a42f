-- Inputs stored in random order (and in tables without any index).
create table a(i, j, v);
create table b(i, j, v);
insert into a select x.value, y.value, (random() % 1000000) / 17.0 + 0.5 from generate_series(0, 39) x, generate_series(0, 24) y order by random();
insert into b select x.value, y.value, (random() % 1000000) / 13.0 + 0.5 from generate_series(20, 59) x, generate_series(0, 24) y order by random();
create temp view ref as select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j order by i, j;
select 'unordered_dense', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref);
create table sa(i, j, v);
create table sb(i, j, v);
insert into sa select value * 100003, (value * 7919) % 5000000, value + 0.5 from generate_series(1, 150) order by random();
insert into sb select value * 100003, (value * 7919) % 5000000, value * 2.0 from generate_series(100, 250) order by random();
create temp view sref as select i, j, sum(v) as v from (select i, j, v from sa union all select i, j, v from sb) group by i, j order by i, j;
select 'unordered_sparse', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('sa', 'sb')) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from sref);
select 'unordered_sparse_path', json_extract(gpu_matadd_info(), '$.path') = 'sparse';
select 'order_is_ascending', (select count(*) from (select i, j, lag(i) over () as pi, lag(j) over () as pj from gpu_matadd('sa', 'sb')) where pi is not null and (i < pi or (i = pi and j <= pj))) = 0;
