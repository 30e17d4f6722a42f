-- Empty inputs.
create table a(i integer, j integer, v real);
create table b(i integer, j integer, v real);
create table c(i integer, j integer, v real);
insert into c values (1, 2, 3.5), (0, 0, -1.25), (2, 2, 0.0);
select 'both_empty', (select count(*) from gpu_matadd('a', 'b')) = 0;
select 'both_empty_path', json_extract(gpu_matadd_info(), '$.path') = 'empty';
select 'left_empty', (select group_concat(i || ',' || j || ',' || v, ';') from gpu_matadd('a', 'c')) = '0,0,-1.25;1,2,3.5;2,2,0.0';
select 'right_empty', (select group_concat(i || ',' || j || ',' || v, ';') from gpu_matadd('c', 'b')) = '0,0,-1.25;1,2,3.5;2,2,0.0';
select 'where_excludes_all', (select count(*) from gpu_matadd('c', 'c') where i > 100) = 0;
