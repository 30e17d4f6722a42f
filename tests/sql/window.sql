-- Window functions: gpu_sum/total/avg/max/min OVER (...), sliding frames,
-- exact xInverse; a frame's result type follows the frame's contents.

create table w(id integer primary key, g, x);
insert into w(id, g, x) values (1, 1, 1), (2, 1, 2.5), (3, 1, 3), (4, 1, 4), (5, 2, NULL), (6, 2, 10), (7, 2, -2), (8, 2, NULL), (9, 2, NULL), (10, 2, 7);
create table big(id integer primary key, x);
insert into big(id, x) values (1, 1e100), (2, 1.0), (3, 0.0), (4, -1e100), (5, 2), (6, 3);
create table inf(id integer primary key, x);
insert into inf(id, x) values (1, 9e999), (2, -9e999), (3, 1.0), (4, 2), (5, 9e999), (6, 4.5);
create table iw(id integer primary key, x);
insert into iw(id, x) values (1, 9223372036854775807), (2, 1), (3, -1), (4, -9223372036854775807), (5, 5);
create table sub(id integer primary key, x);
insert into sub(id, x) values (1, 1e300), (2, 1.0), (3, ieee754(1, -1074)), (4, -1.0), (5, ieee754(3, -1074)), (6, 2.0);
create table ints(id integer primary key, k, x);
insert into ints(id, k, x) select value, value / 3, (value * 7919) % 101 - 50 from generate_series(1, 300);

-- sliding ROWS frame of 2: 1 | 1+2.5 | 2.5+3 | 3+4 ; types follow the frame
select 'win_sum_rows2', count(*) = 4 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 4, group_concat(quote(r.v), ',') from (select id, gpu_sum(x) over (order by id rows between 1 preceding and current row) v from w where g = 1) r join (values (1, 1), (2, 3.5), (3, 5.5), (4, 7)) e on e.column1 = r.id;
select 'win_sum_running_int', sum(ok) = 300 from (select gpu_sum(x) over (order by id) is sum(x) over (order by id) and typeof(gpu_sum(x) over (order by id)) = 'integer' ok from ints);
select 'win_sum_rows_sliding_int', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by id rows between 5 preceding and 3 following));
select 'win_sum_rows_unbounded_following', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by id rows between current row and unbounded following));
select 'win_sum_rows_following_only', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by id rows between 2 following and 4 following));
select 'win_sum_range', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by k range between 2 preceding and 1 following));
select 'win_sum_range_unbounded', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by k range between current row and unbounded following));
select 'win_sum_groups', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by k groups between 1 preceding and 2 following));
select 'win_sum_exclude_current', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by id rows between 2 preceding and 2 following exclude current row));
select 'win_sum_exclude_group', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (order by k groups between 1 preceding and 1 following exclude group));
select 'win_sum_partition', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win ok from ints window win as (partition by id % 4 order by id rows between 3 preceding and current row));
select 'win_sum_whole_partition', sum(ok) = 300 from (select gpu_sum(x) over (partition by k) is sum(x) over (partition by k) ok from ints);
select 'win_sum_null_frames', count(*) = 6 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 6, group_concat(quote(r.v), ',') from (select id - 4 id, gpu_sum(x) over (order by id rows between 1 preceding and current row) v from w where g = 2) r join (values (1, NULL), (2, 10), (3, 8), (4, -2), (5, NULL), (6, 7)) e on e.column1 = r.id;
select 'win_sum_empty_frame', count(*) = 4 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 4, group_concat(quote(r.v), ',') from (select id, gpu_sum(x) over (order by id rows between 2 following and 3 following) v from w where g = 1) r join (values (1, 7), (2, 4), (3, NULL), (4, NULL)) e on e.column1 = r.id;
-- exact inverse: dropping 1e100 must leave 1.0
select 'win_sum_drop_big', v = 1.0 and typeof(v) = 'real' from (select id, gpu_sum(x) over (order by id rows between 1 preceding and current row) v from big) where id = 3;
select 'win_sum_rows1_big', count(*) = 6 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 6, group_concat(quote(r.v), ',') from (select id, gpu_sum(x) over (order by id rows between 1 preceding and current row) v from big) r join (values (1, 1e100), (2, 1e100), (3, 1.0), (4, -1e100), (5, -1e100), (6, 5)) e on e.column1 = r.id;
select 'win_sum_big_back_to_int', v = 5 and typeof(v) = 'integer' from (select id, gpu_sum(x) over (order by id rows between 1 preceding and current row) v from big) where id = 6;
select 'win_total_drop_big', v = 1.0 from (select id, gpu_total(x) over (order by id rows between 1 preceding and current row) v from big) where id = 3;
select 'win_avg_drop_big', v = 0.5 from (select id, gpu_avg(x) over (order by id rows between 1 preceding and current row) v from big) where id = 3;
select 'win_sum_subnormal_frames', count(*) = 6 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 6, group_concat(quote(r.v), ',') from (select id, gpu_sum(x) over (order by id rows between 2 preceding and current row) v from sub) r join (values (1, 1e300), (2, 1e300), (3, 1e300), (4, ieee754(1, -1074)), (5, -1.0), (6, 1.0)) e on e.column1 = r.id;
-- infinities enter and leave frames
select 'win_sum_inf_frames', count(*) = 6 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 6, group_concat(quote(r.v), ',') from (select id, gpu_sum(x) over (order by id rows between 1 preceding and current row) v from inf) r join (values (1, 9e999), (2, NULL), (3, -9e999), (4, 3.0), (5, 9e999), (6, 9e999)) e on e.column1 = r.id;
select 'win_sum_inf_leaves', v = 3.0 and typeof(v) = 'real' from (select id, gpu_sum(x) over (order by id rows between 1 preceding and current row) v from inf) where id = 4;
select 'win_sum_inf_leaves_int', v = 2 and typeof(v) = 'integer' from (select id, gpu_sum(x) over (order by id rows between current row and current row) v from inf) where id = 4;
-- integer frames: the total of the frame decides, not the running state
select 'win_sum_int_order_independent', count(*) = 5 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 5, group_concat(quote(r.v), ',') from (select id, gpu_sum(x) over (order by id rows between current row and 2 following) v from iw) r join (values (1, 9223372036854775807), (2, -9223372036854775807), (3, -9223372036854775803), (4, -9223372036854775802), (5, 5)) e on e.column1 = r.id;
select 'win_sum_int_frame_overflow', (select group_concat(v, ',') from (select gpu_sum(x) over (order by id rows between current row and 1 following) v from iw order by id)); -- error: integer overflow
-- gpu_total and gpu_avg over frames
select 'win_total_rows2', count(*) = 4 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 4, group_concat(quote(r.v), ',') from (select id, gpu_total(x) over (order by id rows between 1 preceding and current row) v from w where g = 1) r join (values (1, 1.0), (2, 3.5), (3, 5.5), (4, 7.0)) e on e.column1 = r.id;
select 'win_total_empty_frame', count(*) = 4 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 4, group_concat(quote(r.v), ',') from (select id, gpu_total(x) over (order by id rows between 2 following and 3 following) v from w where g = 1) r join (values (1, 7.0), (2, 4.0), (3, 0.0), (4, 0.0)) e on e.column1 = r.id;
select 'win_avg_empty_frame', count(*) = 4 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 4, group_concat(quote(r.v), ',') from (select id, gpu_avg(x) over (order by id rows between 2 following and 3 following) v from w where g = 1) r join (values (1, 3.5), (2, 4.0), (3, NULL), (4, NULL)) e on e.column1 = r.id;
select 'win_avg_vs_builtin_ints', sum(ok) = 300 from (select gpu_avg(x) over win = avg(x) over win ok from ints window win as (order by id rows between 4 preceding and 4 following));
select 'win_total_vs_builtin_ints', sum(ok) = 300 from (select gpu_total(x) over win = total(x) over win ok from ints window win as (order by k range between 1 preceding and current row));
-- gpu_max / gpu_min over frames (values and types like max()/min())
select 'win_max_sliding', (select group_concat(v, ',') from (select gpu_max(x) over (order by id rows between 1 preceding and current row) v from (select column1 id, column2 x from (values (1, 5), (2, 1), (3, 2), (4, 3), (5, 0))) order by id)) = '5,5,2,3,3';
select 'win_min_sliding', (select group_concat(v, ',') from (select gpu_min(x) over (order by id rows between 1 preceding and current row) v from (select column1 id, column2 x from (values (1, 1), (2, 5), (3, 4), (4, 3), (5, 9))) order by id)) = '1,1,4,3,3';
select 'win_max_vs_builtin', sum(ok) = 300 from (select gpu_max(x) over win is max(x) over win and gpu_min(x) over win is min(x) over win ok from ints window win as (order by id rows between 7 preceding and 2 following));
select 'win_max_range_vs_builtin', sum(ok) = 300 from (select gpu_max(x) over win is max(x) over win and gpu_min(x) over win is min(x) over win ok from ints window win as (order by k range between 1 preceding and 1 following));
select 'win_max_groups_vs_builtin', sum(ok) = 300 from (select gpu_max(x) over win is max(x) over win and gpu_min(x) over win is min(x) over win ok from ints window win as (order by k groups between current row and unbounded following));
select 'win_max_types', count(*) = 4 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 4, group_concat(quote(r.v), ',') from (select id, gpu_max(x) over (order by id rows between 1 preceding and current row) v from w where g = 1) r join (values (1, 1), (2, 2.5), (3, 3), (4, 4)) e on e.column1 = r.id;
select 'win_max_mixed_classes', count(*) = 7 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 7, group_concat(quote(r.v), ',') from (select id, gpu_max(x) over (order by id rows between 1 preceding and current row) v from (select column1 id, column2 x from (values (1, 'b'), (2, 1), (3, x'00'), (4, 2.5), (5, NULL), (6, NULL), (7, 'a')))) r join (values (1, 'b'), (2, 'b'), (3, x'00'), (4, x'00'), (5, 2.5), (6, NULL), (7, 'a')) e on e.column1 = r.id;
select 'win_min_mixed_classes', count(*) = 7 and sum(r.v is e.column2 and typeof(r.v) = typeof(e.column2)) = 7, group_concat(quote(r.v), ',') from (select id, gpu_min(x) over (order by id rows between 1 preceding and current row) v from (select column1 id, column2 x from (values (1, 'b'), (2, 1), (3, x'00'), (4, 2.5), (5, NULL), (6, NULL), (7, 'a')))) r join (values (1, 'b'), (2, 1), (3, 1), (4, 2.5), (5, 2.5), (6, NULL), (7, 'a')) e on e.column1 = r.id;
select 'win_max_empty_frame', v is null from (select id, gpu_max(x) over (order by id rows between 1 following and 2 following) v from ints) where id = 300;
select 'win_several_functions', sum(ok) = 300 from (select gpu_sum(x) over win is sum(x) over win and gpu_max(x) over win is max(x) over win and gpu_min(x) over win is min(x) over win and gpu_total(x) over win = total(x) over win ok from ints window win as (partition by id % 3 order by id rows between 2 preceding and 1 following));
