-- CREATE VIRTUAL TABLE c USING gpu_matadd(a, b): every scan reads the current a and b.
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
insert into a values (0, 0, 1), (1, 1, 2);
insert into b values (0, 0, 10), (2, 2, 20);
create virtual table c using gpu_matadd(a, b);
select 'persistent_scan', (select group_concat(i || ',' || j || ',' || v, ';') from c) = '0,0,11.0;1,1,2.0;2,2,20.0';
select 'persistent_star_columns', (select group_concat(name, ',') from pragma_table_info('c')) = 'i,j,v';
insert into a values (2, 2, 0.5);
update b set v = 100 where i = 0;
select 'persistent_sees_changes', (select group_concat(i || ',' || j || ',' || v, ';') from c) = '0,0,101.0;1,1,2.0;2,2,20.5';
select 'persistent_where', (select group_concat(i || ',' || j || ',' || v, ';') from c where i >= 1 and j < 2) = '1,1,2.0';
select 'persistent_pushdown', json_extract(gpu_matadd_info(), '$.rows_read') = 1;
create virtual table cq using gpu_matadd("main".a, 'b');
select 'persistent_quoted_args', (select count(*) from cq) = 3;
create virtual table ce using gpu_matadd(a, nope);
select 'persistent_missing_input', (select count(*) from ce); -- error: gpu_matadd: no such table or view: nope
create table nope(i, j, v);
select 'persistent_created_later', (select count(*) from ce) = 3;
select 'persistent_in_join', (select count(*) from c x join c y on x.i = y.j) = 3;
create virtual table cc using gpu_matadd(c, a);
select 'persistent_of_persistent', (select group_concat(i || ',' || j || ',' || v, ';') from cc) = '0,0,102.0;1,1,4.0;2,2,21.0';
drop table c;
select 'dropped', (select count(*) from c); -- error: no such table: c
select 'base_tables_kept', (select count(*) from a) + (select count(*) from b) = 5;
create virtual table c1 using gpu_matadd(a); -- error: gpu_matadd: expected 2 arguments (the tables to add), got 1
select 'wrong_count_create1', (select count(*) from sqlite_master where name = 'c1') = 0;
create virtual table c3 using gpu_matadd(a, b, a); -- error: gpu_matadd: expected 2 arguments (the tables to add), got 3
create virtual table c0 using gpu_matadd; -- error: gpu_matadd: expected 2 arguments (the tables to add), got 0
create virtual table self using gpu_matadd(self, a);
select 'self_reference', (select count(*) from self); -- error-prefix: gpu_matadd:
