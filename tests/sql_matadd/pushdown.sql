-- Constraints on i and j are pushed into the queries that read a and b.
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
insert into a select x.value, y.value, (random() % 100000) / 3.0 + 0.5 from generate_series(0, 99) x, generate_series(0, 49) y;
insert into b select x.value, y.value, (random() % 100000) / 7.0 + 0.5 from generate_series(50, 149) x, generate_series(25, 74) y;
create index a_ij on a(i, j);
create virtual table c using gpu_matadd(a, b);
create temp view ref as select i, j, sum(v) as v from (select i, j, v from a union all select i, j, v from b) group by i, j order by i, j;
select 'full_reads_all', (select count(*) from gpu_matadd('a', 'b')) = (select count(*) from ref) and json_extract(gpu_matadd_info(), '$.rows_read') = 10000;
select 'eq_i_result', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b') where i = 60) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref where i = 60);
select 'eq_i_reads_less', json_extract(gpu_matadd_info(), '$.rows_read') = 100 and json_extract(gpu_matadd_info(), '$.pushed') = 'i=';
select 'eq_i_3_reads_less', (select count(*) from gpu_matadd('a', 'b') where i = 3) = 50 and json_extract(gpu_matadd_info(), '$.rows_read') = 50;
--plan plan_eq_i | select * from gpu_matadd('a', 'b') where i = 3 | VIRTUAL TABLE INDEX 1:i= |
--plan plan_range | select * from gpu_matadd('a', 'b') where i >= 3 and j < 5 | VIRTUAL TABLE INDEX 1:i>=,j< |
--plan plan_order_consumed | select * from gpu_matadd('a', 'b') order by i, j | VIRTUAL TABLE | TEMP B-TREE
--plan plan_order_i_consumed | select * from gpu_matadd('a', 'b') order by i | VIRTUAL TABLE | TEMP B-TREE
--plan plan_order_j_under_eq | select * from gpu_matadd('a', 'b') where i = 3 order by j | VIRTUAL TABLE | TEMP B-TREE
--plan plan_order_desc_sorts | select * from gpu_matadd('a', 'b') order by i desc | TEMP B-TREE |
--plan plan_order_j_sorts | select * from gpu_matadd('a', 'b') order by j, i | TEMP B-TREE |
--plan plan_order_j_alone_sorts | select * from gpu_matadd('a', 'b') order by j | TEMP B-TREE |
select 'order_j_result', (select group_concat(j, ',') from (select j from gpu_matadd('a', 'b') order by j)) = (select group_concat(j, ',') from (select j from ref order by j));
select 'order_j_where_i_range_result', (select group_concat(j, ',') from (select j from gpu_matadd('a', 'b') where i > 40 order by j)) = (select group_concat(j, ',') from (select j from ref where i > 40 order by j));
--plan plan_persistent | select * from c where i = 3 order by j | VIRTUAL TABLE INDEX 0:i= | TEMP B-TREE
select 'range_result', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b') where i between 40 and 59 and j > 20 and j <= 30) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref where i between 40 and 59 and j > 20 and j <= 30);
select 'range_reads_less', json_extract(gpu_matadd_info(), '$.rows_read') = 20 * 10 + 10 * 6;
select 'lt_gt_result', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b') where i < 52 and i > 48) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref where i < 52 and i > 48);
select 'eq_j_result', (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from gpu_matadd('a', 'b') where j = 30) = (select group_concat(i || ',' || j || ',' || printf('%.17g', v), ';') from ref where j = 30);
select 'text_constraint', (select group_concat(i || ',' || j, ';') from gpu_matadd('a', 'b') where i = '3' and j = '4') = '3,4';
select 'real_constraint', (select count(*) from gpu_matadd('a', 'b') where i = 2.5) = 0 and (select count(*) from gpu_matadd('a', 'b') where i > 148.5) = 50;
select 'null_constraint', (select count(*) from gpu_matadd('a', 'b') where i = null) = 0;
select 'nonnumeric_constraint', (select count(*) from gpu_matadd('a', 'b') where i < 'abc') = (select count(*) from ref where i < 'abc');
select 'or_constraint', (select count(*) from gpu_matadd('a', 'b') where i = 3 or i = 120) = 100;
select 'in_constraint', (select group_concat(i || ',' || j, ';') from gpu_matadd('a', 'b') where i in (1, 2) and j = 0) = '1,0;2,0';
select 'join_on_i', (select count(*) from (select 7 as k union all select 70) s join gpu_matadd('a', 'b') g on g.i = s.k) = 50 + 75;
select 'persistent_eq_i', (select count(*) from c where i = 60) = 75 and json_extract(gpu_matadd_info(), '$.rows_read') = 100;
