-- Every error: a SQL error starting 'gpu_matadd:' naming table and coordinate/column.
create table a(i integer, j integer, v real);
insert into a values (0, 0, 1), (1, 1, 2);
create table b(i integer, j integer, v real);
insert into b values (0, 0, 3);
select 'no_such_table', (select count(*) from gpu_matadd('a', 'nope')); -- error: gpu_matadd: no such table or view: nope
select 'no_such_table_first', (select count(*) from gpu_matadd('nope', 'a')); -- error: gpu_matadd: no such table or view: nope
select 'no_such_schema', (select count(*) from gpu_matadd('zz.a', 'a')); -- error: gpu_matadd: no such table or view: zz.a
select 'temp_schema_only', (select count(*) from gpu_matadd('temp.a', 'a')); -- error: gpu_matadd: no such table or view: temp.a
select 'injection', (select count(*) from gpu_matadd('a', 'b; DROP TABLE a')); -- error: gpu_matadd: no such table or view: b; DROP TABLE a
select 'injection_quote', (select count(*) from gpu_matadd('a', 'b"; DROP TABLE a; --')); -- error: gpu_matadd: no such table or view: b"; DROP TABLE a; --
select 'injection_left_a', (select count(*) from a) = 2;
create table no_i(x integer, j integer, v real);
create table no_j(i integer, y integer, v real);
create table no_v(i integer, j integer, w real);
select 'missing_i', (select count(*) from gpu_matadd('no_i', 'a')); -- error: gpu_matadd: table no_i has no column i
select 'missing_j', (select count(*) from gpu_matadd('a', 'no_j')); -- error: gpu_matadd: table no_j has no column j
select 'missing_v', (select count(*) from gpu_matadd('a', 'no_v')); -- error: gpu_matadd: table no_v has no column v
create table dup(i integer, j integer, v real);
insert into dup values (0, 0, 1), (2, 3, 1), (1, 1, 1), (2, 3, 5);
select 'duplicate_dense', (select count(*) from gpu_matadd('a', 'dup')); -- error: gpu_matadd: table dup: duplicate entry (2, 3)
create table dup_sparse(i integer, j integer, v real);
insert into dup_sparse values (0, 0, 1), (5000000000, 7, 1), (9, 9000000000, 1), (5000000000, 7, 2);
select 'duplicate_sparse', (select count(*) from gpu_matadd('dup_sparse', 'a')); -- error: gpu_matadd: table dup_sparse: duplicate entry (5000000000, 7)
select 'duplicate_outside_where_not_read', (select count(*) from gpu_matadd('a', 'dup') where i = 1) = 1;
create table neg_i(i integer, j integer, v real);
insert into neg_i values (0, 0, 1), (-1, 2, 1);
select 'negative_i', (select count(*) from gpu_matadd('neg_i', 'a')); -- error: gpu_matadd: table neg_i: row (i=-1, j=2): i must be a non-negative integer
create table neg_j(i integer, j integer, v real);
insert into neg_j values (4, -7, 1);
select 'negative_j', (select count(*) from gpu_matadd('a', 'neg_j')); -- error: gpu_matadd: table neg_j: row (i=4, j=-7): j must be a non-negative integer
create table frac(i, j, v);
insert into frac values (2.5, 1, 1);
select 'fractional_i', (select count(*) from gpu_matadd('a', 'frac')); -- error: gpu_matadd: table frac: row (i=2.5, j=1): i must be a non-negative integer
create table text_j(i, j, v);
insert into text_j values (1, 'x', 1);
select 'text_j', (select count(*) from gpu_matadd('a', 'text_j')); -- error: gpu_matadd: table text_j: row (i=1, j='x'): j must be a non-negative integer
create table null_i(i, j, v);
insert into null_i values (null, 3, 1);
select 'null_i', (select count(*) from gpu_matadd('null_i', 'a')); -- error: gpu_matadd: table null_i: row (i=NULL, j=3): i must be a non-negative integer
create table huge_i(i, j, v);
insert into huge_i values (1e19, 0, 1);
select 'huge_real_i', (select count(*) from gpu_matadd('huge_i', 'a')); -- error: gpu_matadd: table huge_i: row (i=1.0e+19, j=0): i must be a non-negative integer
create table null_v(i integer, j integer, v);
insert into null_v values (0, 0, 1), (3, 4, null);
select 'null_v', (select count(*) from gpu_matadd('a', 'null_v')); -- error: gpu_matadd: table null_v: entry (3, 4): v is NULL
create table text_v(i integer, j integer, v);
insert into text_v values (5, 6, 'abc');
select 'text_v', (select count(*) from gpu_matadd('text_v', 'a')); -- error: gpu_matadd: table text_v: entry (5, 6): v is not numeric ('abc')
create table blob_v(i integer, j integer, v);
insert into blob_v values (0, 1, x'00ff');
select 'blob_v', (select count(*) from gpu_matadd('blob_v', 'a')); -- error: gpu_matadd: table blob_v: entry (0, 1): v is not numeric (a blob)
select 'args_0', (select count(*) from gpu_matadd()); -- error: gpu_matadd: expected 2 arguments (the tables to add), got 0
select 'args_0_bare', (select count(*) from gpu_matadd); -- error: gpu_matadd: expected 2 arguments (the tables to add), got 0
select 'args_1', (select count(*) from gpu_matadd('a')); -- error: gpu_matadd: expected 2 arguments (the tables to add), got 1
select 'args_3', (select count(*) from gpu_matadd('a', 'b', 'a')); -- error: gpu_matadd: expected 2 arguments (the tables to add), got 3
select 'arg_null', (select count(*) from gpu_matadd('a', null)); -- error: gpu_matadd: argument 2 must be a table name (text)
select 'arg_int', (select count(*) from gpu_matadd(1, 'a')); -- error: gpu_matadd: argument 1 must be a table name (text)
-- SQLITE_VTAB_DIRECTONLY: not from views or triggers.
create view vv as select * from gpu_matadd('a', 'b');
select 'directonly_view', (select count(*) from vv); -- error: unsafe use of virtual table "gpu_matadd"
create table log(x);
create trigger tr after insert on log begin insert into log select count(*) from gpu_matadd('a', 'b'); end;
insert into log values (1); -- error: unsafe use of virtual table "gpu_matadd"
select 'still_works_directly', (select count(*) from gpu_matadd('a', 'b')) = 2;
select 'empty_name_shown', (select count(*) from gpu_matadd('', 'a')); -- error: gpu_matadd: no such table or view: ''
select 'empty_name_shown_second', (select count(*) from gpu_matadd('a', '')); -- error: gpu_matadd: no such table or view: ''
